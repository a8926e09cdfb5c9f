"""A plugin for the ``serve --workers`` tests: packs that say which process answered."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from testpacks import OPEN_INPUT, output_schema

from control_plane import Context, Pack, Reach, hookimpl

#: A file whose existence makes a worker that starts now hang in start-up (a restart
#: caught by the supervisor's SIGTERM before it serves).
_SLOW_START = os.environ.get("WORKERPACKS_SLOW_START")
if _SLOW_START and os.path.exists(_SLOW_START):
    time.sleep(60)


async def whoami(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """The worker's pid (after ``seconds`` of sleep: in-flight calls for drain tests)."""
    await asyncio.sleep(doc.get("seconds", 0))
    return {"pid": os.getpid(), "tag": doc.get("tag", "")}


async def block(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Block the worker's event loop (a pack bug: a blocking call in an async handler)."""
    time.sleep(doc.get("seconds", 600))
    return {}


async def refused(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """A classified failure (``network_error``): one error event, no incident."""
    raise ConnectionRefusedError(f"refused by worker {os.getpid()}")


async def broken(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """An unclassifiable failure: ``internal_error`` with an incident per call."""
    raise RuntimeError(f"broken in worker {os.getpid()}")


PACKS = [
    Pack(
        "worker.whoami",
        "1.0.0",
        "The pid of the worker that answered.",
        OPEN_INPUT,
        output_schema(["timeout"], pid={"type": "integer"}, tag={"type": "string"}),
        whoami,
        reach=Reach(),
    ),
    Pack(
        "worker.block",
        "1.0.0",
        "Block the event loop.",
        OPEN_INPUT,
        output_schema(["timeout"]),
        block,
        reach=Reach(),
    ),
    Pack(
        "worker.refused",
        "1.0.0",
        "Fail with network_error.",
        OPEN_INPUT,
        output_schema(["network_error"]),
        refused,
        reach=Reach(),
    ),
    Pack(
        "worker.broken",
        "1.0.0",
        "Fail with internal_error.",
        OPEN_INPUT,
        output_schema(["timeout"]),
        broken,
        reach=Reach(),
    ),
]


@hookimpl
def register_packs(register: Any) -> None:
    for pack in PACKS:
        register(pack)
