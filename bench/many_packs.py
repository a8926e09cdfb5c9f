"""A plugin registering 100 packs, for the cold-start figure (``packctl serve`` to healthy).

Each pack has its own input and output schema (so each compiles its own validators) and
a pack-specific code besides the baseline ones.
"""

from __future__ import annotations

from typing import Any

from control_plane import CodeDoc, Context, Pack, Reach, hookimpl

__all__ = ["COUNT", "register_packs"]

COUNT = 100


async def _handler(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"ok": True}


def _pack(i: int) -> Pack:
    input_schema = {
        "type": "object",
        "properties": {
            f"field_{i}": {"type": "string", "maxLength": 100 + i},
            "count": {"type": "integer", "minimum": 0, "maximum": 1000 + i},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": [f"field_{i}"],
    }
    output_schema = {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            f"value_{i}": {"type": "number"},
            "error": {
                "type": "object",
                "properties": {
                    "code": {"enum": ["not_found", "timeout", "network_error", f"quota_{i}"]},
                    "message": {"type": "string"},
                },
            },
        },
    }
    return Pack(
        f"many.pack_{i:03d}",
        "1.0.0",
        f"Pack number {i}.",
        input_schema,
        output_schema,
        _handler,
        codes={
            f"quota_{i}": CodeDoc(
                f"quota {i} is used up", retryable=True, recovery_hint="retry later"
            )
        },
        reach=Reach(),  # reaches nothing: 100 packs in-process, as a cold start measures
    )


@hookimpl
def register_packs(register: Any) -> None:
    """Register :data:`COUNT` packs."""
    for i in range(COUNT):
        register(_pack(i))
