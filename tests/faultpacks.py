"""A plugin of packs that misbehave as badly as a process can: exit, segfault, leak, hang.

For the reliability tests (isolation, soak). Only ever run them isolated
(``isolate=["fault.crash", ...]`` / ``packctl serve --isolate fault.crash``): in-process they
would take the test run down with them. ``fault.ok`` is the well-behaved neighbour.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import time
from typing import Any

from control_plane import Context, Pack, PackError, Reach, hookimpl

OPEN_INPUT: dict[str, Any] = {"type": "object"}
_HOARD: list[bytearray] = []


def output_schema(codes: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": {"code": {"enum": codes}, "message": {"type": "string"}},
            }
        },
    }


def crash(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Misbehave as ``mode`` says: exit, segv, leak, hang, abort, raise, typed, ok."""
    mode = doc.get("mode", "ok")
    if mode == "exit":
        os._exit(3)
    if mode == "segv":
        ctypes.string_at(0)
    if mode == "abort":
        os.abort()
    if mode == "leak":
        # Grow until the worker's memory limit stops us (MemoryError), 64 MiB at a time;
        # pages are touched so the resident set grows too. Capped for safety.
        for _ in range(64):
            chunk = bytearray(64 * 1024 * 1024)
            chunk[::4096] = b"x" * len(chunk[::4096])
            _HOARD.append(chunk)
        _HOARD.clear()
        return {"pid": os.getpid(), "leaked": False}
    if mode == "hang":
        time.sleep(3600)  # ignores ctx.cancelled: only killing the worker stops it
    if mode == "raise":
        raise ConnectionResetError("downstream reset the connection (password=hunter2-xyz)")
    if mode == "typed":
        raise PackError("rate_limited", "slow down", retry_after=1.5)
    return {"pid": os.getpid()}


async def ok(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Echo (after ``sleep`` seconds, for calls in flight at shutdown)."""
    if doc.get("sleep"):
        await asyncio.sleep(float(doc["sleep"]))
    return {"pid": os.getpid(), "echo": doc}


PACKS = [
    Pack(
        "fault.crash",
        "1.0.0",
        "Misbehave (exit, segfault, leak, hang) on request.",
        OPEN_INPUT,
        output_schema(["timeout", "network_error", "rate_limited"]),
        crash,
        reach=Reach(),
    ),
    Pack(
        "fault.ok",
        "1.0.0",
        "A well-behaved isolated pack (async).",
        OPEN_INPUT,
        output_schema(["timeout"]),
        ok,
        isolated=True,
        reach=Reach(),
    ),
]


@hookimpl
def register_packs(register: Any) -> None:
    for pack in PACKS:
        register(pack)
