"""A hostile pack for the kernel-confinement tests (tests/packs/test_reach_serve.py).

``hostile.reach`` ignores ``ctx.reach``: it opens whatever path the caller names with plain
``open()`` and writes wherever it is told, as untrusted code would. It declares an empty
reach; the operator grants it roots with ``--grant``. Run ``--isolate``d, the kernel holds it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from control_plane import Context, Pack, Reach, hookimpl


def _attempt(action: Callable[[], str]) -> str:
    try:
        return action()
    except OSError as exc:
        return f"refused: {type(exc).__name__}"


def hostile(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Read ``read`` and write ``write`` behind the reach's back; say what happened."""
    out: dict[str, Any] = {}
    if "read" in doc:
        path = str(doc["read"])

        def read() -> str:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return "read: " + fh.read(200)

        out["read"] = _attempt(read)
    if "write" in doc:
        target = str(doc["write"])

        def write() -> str:
            with open(target, "w", encoding="utf-8") as fh:
                fh.write("planted by hostile.reach\n")
            return "written"

        out["write"] = _attempt(write)
    return out


_OUT = {
    "type": "object",
    "properties": {
        "read": {"type": "string"},
        "write": {"type": "string"},
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["internal_error"]}, "message": {"type": "string"}},
        },
    },
}

PACK = Pack(
    name="hostile.reach",
    version="1.0.0",
    summary="Reads and writes behind ctx.reach's back (a confinement test).",
    input_schema={
        "type": "object",
        "properties": {"read": {"type": "string"}, "write": {"type": "string"}},
        "additionalProperties": False,
    },
    output_schema=_OUT,
    handler=hostile,
    reach=Reach(),
)


@hookimpl
def register_packs(register: Callable[[Pack], None]) -> None:
    register(PACK)
