"""Packs and hooks that try to hold the server's resources (tests/test_resources.py).

Loaded into real ``packctl serve`` processes with ``--plugin resourcepacks``.
``res.raise`` (sync, in the thread pool) raises an exception whose attribute or text is
slow, as the input's ``mode`` says, for ``seconds``; ``res.echo`` is an async neighbour
answered on the loop, ``res.block`` an async pack that holds the loop. The
``classify_exception`` hook sleeps for a :class:`SlowToClassify`, and the event sink does
what ``RESOURCEPACKS_SINK`` says (``exit``: raise ``SystemExit``; ``sleep``: sleep 3 s)
for events of ``res.raise``.
"""

from __future__ import annotations

import os
import time
from typing import Any

from control_plane import Context, Pack, Reach, hookimpl

INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"mode": {"type": "string"}, "seconds": {"type": "number"}},
}
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["timeout"]}, "message": {"type": "string"}},
        }
    },
}


def _slow(seconds: float) -> None:
    time.sleep(seconds)


class SlowAttribute(Exception):
    """``.response``, ``.errno`` (what classifiers read) sleep."""

    def __init__(self, seconds: float, name: str) -> None:
        super().__init__("slow attribute")
        self.seconds, self.slow_name = seconds, name

    def __getattribute__(self, name: str) -> Any:
        if name == object.__getattribute__(self, "slow_name"):
            _slow(object.__getattribute__(self, "seconds"))
            return None
        return object.__getattribute__(self, name)


class SlowHeaders:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def get(self, key: str, default: Any = None) -> Any:
        _slow(self.seconds)
        return default


class SlowResponseHeaders(Exception):
    """An HTTP error whose ``response.headers.get`` sleeps."""

    def __init__(self, seconds: float) -> None:
        super().__init__("HTTP 503")
        self.status_code = 503
        self.headers = SlowHeaders(seconds)
        self.response = self


class SlowGetattr(Exception):
    """Every missing attribute a classifier probes sleeps."""

    def __init__(self, seconds: float) -> None:
        super().__init__("slow getattr")
        self.seconds = seconds

    def __getattr__(self, name: str) -> Any:
        _slow(self.seconds)
        raise AttributeError(name)


class SlowStr(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__("slow str")
        self.seconds = seconds

    def __str__(self) -> str:
        _slow(self.seconds)
        return "slow str"


class SlowNote(str):
    seconds = 3.0

    def __str__(self) -> str:
        _slow(self.seconds)
        return "slow note"


class SlowToClassify(Exception):
    """The plugin's ``classify_exception`` hook sleeps on this one."""

    def __init__(self, seconds: float) -> None:
        super().__init__("slow to classify")
        self.seconds = seconds


#: Built once, at import: what is measured is how its failure is settled, not the pack's
#: own 200,000 allocations (whose garbage collection stops every thread, the loop's too).
_GROUP = ExceptionGroup("many", [ValueError(i) for i in range(200_000)])


def _exception(mode: str, seconds: float) -> BaseException:
    if mode in ("response", "errno"):
        return SlowAttribute(seconds, mode)
    if mode == "headers":
        return SlowResponseHeaders(seconds)
    if mode == "getattr":
        return SlowGetattr(seconds)
    if mode == "str":
        return SlowStr(seconds)
    if mode == "notes":
        exc = RuntimeError("noted")
        SlowNote.seconds = seconds
        exc.add_note(SlowNote("a note"))
        return exc
    if mode == "group":
        return _GROUP
    if mode == "classify":
        return SlowToClassify(seconds)
    return RuntimeError(mode)


def _raise(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    raise _exception(str(doc.get("mode", "")), float(doc.get("seconds", 3.0)))


async def _echo(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {}


#: Calls of ``res.wait_cancel`` that saw ``ctx.cancelled`` and returned.
SEEN_CANCELLED: list[str] = []


def _wait_cancel(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Wait up to 30 s, polling ``ctx.cancelled`` as docs/authoring.md shows."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if ctx.cancelled:
            SEEN_CANCELLED.append(ctx.request_id)
            return {}
        time.sleep(0.01)
    return {}


def _seen(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"seen": len(SEEN_CANCELLED)}


async def _block(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    _slow(float(doc.get("seconds", 1.0)))  # holds the event loop: what the stall metric sees
    return {}


PACKS = [
    Pack(
        name="res.raise",
        version="1.0.0",
        summary="Raises an exception whose attributes or text are slow.",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=_raise,
        reach=Reach(),
    ),
    Pack(
        name="res.echo",
        version="1.0.0",
        summary="Answers at once, on the event loop.",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=_echo,
        reach=Reach(),
    ),
    Pack(
        name="res.wait_cancel",
        version="1.0.0",
        summary="Waits until the control plane gives up on the call.",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=_wait_cancel,
        reach=Reach(),
    ),
    Pack(
        name="res.seen",
        version="1.0.0",
        summary="How many calls of res.wait_cancel saw their cancellation.",
        input_schema=INPUT,
        output_schema={**OUTPUT, "properties": {**OUTPUT["properties"], "seen": {}}},
        handler=_seen,
        reach=Reach(),
    ),
    Pack(
        name="res.block",
        version="1.0.0",
        summary="Holds the event loop for `seconds` (a careless async pack).",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=_block,
        reach=Reach(),
    ),
]


@hookimpl
def register_packs(register: Any) -> None:
    for pack in PACKS:
        register(pack)


@hookimpl
def classify_exception(exc: BaseException) -> None:
    if type(exc) is SlowToClassify:
        _slow(exc.seconds)


def _sink(event: Any) -> None:
    if event.pack != "res.raise":
        return
    mode = os.environ.get("RESOURCEPACKS_SINK", "")
    if mode == "exit":
        raise SystemExit(3)
    if mode == "sleep":
        _slow(3.0)


@hookimpl
def register_event_sinks(register: Any) -> None:
    register(_sink)
