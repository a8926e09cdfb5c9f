"""Packs that return large results (tests/test_large_results.py).

Loaded into a real ``packctl serve`` with ``--plugin largepacks``. ``large.result`` (sync,
in the thread pool) returns about ``mib`` MiB of nested JSON -- objects, arrays, strings,
numbers -- under an output schema that does not descend into the items (as http.fetch's
parsed ``json`` body; a schema that does is one call of the schema library, which holds
the GIL throughout: docs/reliability.md); ``large.echo`` is an async neighbour answered on the
loop, the probe of the loop's latency.
"""

from __future__ import annotations

import gc
import os
import threading
from typing import Any

import orjson

from control_plane import Context, Pack, Reach, hookimpl

INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"mib": {"type": "number", "minimum": 0, "maximum": 64}},
}
ERROR: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"enum": ["timeout"]}, "message": {"type": "string"}},
}
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"items": {"type": "array"}, "error": ERROR},
}

if os.environ.get("LARGEPACKS_GC") == "off":
    gc.disable()

_built: dict[float, dict[str, Any]] = {}
_lock = threading.Lock()


def _document(mib: float) -> dict[str, Any]:
    """About ``mib`` MiB of JSON, built once per size: what is measured is how the result
    is handled, not the pack's own allocations."""
    with _lock:
        doc = _built.get(mib)
        if doc is None:
            items: list[dict[str, Any]] = []
            size, target = 0, int(mib * (1 << 20))
            while size < target:
                i = len(items)
                item = {
                    "id": i,
                    "name": f"item-{i}",
                    "tags": ["alpha", "beta", "gamma"],
                    "nested": {"x": i * 1.5, "y": [i, i + 1, {"z": "w" * 20}]},
                }
                items.append(item)
                size += len(orjson.dumps(item)) + 1
            doc = _built[mib] = {"items": items}
        return doc


def _result(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return _document(float(doc.get("mib", 8)))


async def _echo(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {}


PACKS = [
    Pack(
        name="large.result",
        version="1.0.0",
        summary="Returns about `mib` MiB of nested JSON.",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=_result,
        reach=Reach(),
    ),
    Pack(
        name="large.echo",
        version="1.0.0",
        summary="Answers at once, on the event loop.",
        input_schema=INPUT,
        output_schema={"type": "object", "properties": {"error": ERROR}},
        handler=_echo,
        reach=Reach(),
    ),
]


@hookimpl
def register_packs(register: Any) -> None:
    for pack in PACKS:
        register(pack)
