"""Two no-op packs for ``bench/confinement.py``: one declares its reach (``Reach()``: it
runs in the server's process), one declares none (it runs in an isolated worker confined to
an empty grant, the default since issue 42)."""

from __future__ import annotations

from typing import Any

from control_plane import Context, Pack, Reach, hookimpl

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "text": {"type": "string"}},
}
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "text": {"type": "string"}},
}


def echo(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Return the input: the call's cost is the runtime's, not the handler's."""
    return doc


DECLARED = Pack(
    name="confine.declared",
    version="1.0.0",
    summary="A no-op that declares its reach (in-process).",
    input_schema=SCHEMA,
    output_schema=OUTPUT,
    handler=echo,
    codes={"not_found": None},
    reach=Reach(),
)
UNDECLARED = Pack(
    name="confine.undeclared",
    version="1.0.0",
    summary="The same no-op, declaring no reach (a confined worker).",
    input_schema=SCHEMA,
    output_schema=OUTPUT,
    handler=echo,
    codes={"not_found": None},
)


@hookimpl
def register_packs(register: Any) -> None:
    register(DECLARED)
    register(UNDECLARED)
