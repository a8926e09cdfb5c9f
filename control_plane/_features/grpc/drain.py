"""Draining: a stopping server holds the calls it picks up, then refuses them as not run."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any, NoReturn

import grpc

from control_plane._features.grpc import status as wire
from control_plane._features.grpc.deadline import deadline_budget
from control_plane._kernel.rejection import Rejection

if TYPE_CHECKING:
    from control_plane._features.observability.observability import Observability

__all__ = [
    "MAX_WINDOW",
    "MIN_BUSY_DRAIN",
    "QUIET",
    "Drain",
    "drain_window",
    "stopping_rejection",
]

#: Seconds without a new call (the loop keeping up) after which the drain ends.
QUIET = 0.05
#: The longest drain, in seconds (it is also at most a quarter of the grace period).
MAX_WINDOW = 2.0
#: The shortest drain of a server that took a call in the last second before the signal.
MIN_BUSY_DRAIN = 0.2
#: "In the last second before the signal": what makes a server busy.
_RECENT = 1.0
#: How often the drain looks; a look that comes this much later than asked means the
#: event loop was busy, and calls may have waited in the transport meanwhile.
_TICK = 0.005
_LATE = QUIET / 2


def drain_window(grace: float | None) -> float:
    """Seconds the drain may take out of a ``grace`` period (none without one)."""
    if not grace or grace <= 0:
        return 0.0
    return min(MAX_WINDOW, grace / 4)


def stopping_rejection(pack: str = "", request_id: str = "") -> Rejection:
    """The refusal of a call that came in while the server was stopping."""
    return Rejection.of(
        "unavailable",
        "the control plane is stopping; the call did not run (send it again later or to "
        "another server)",
        pack=pack,
        request_id=request_id,
    )


class Drain:
    """A server's drain state: :meth:`begin`, :meth:`settle`, then :meth:`release`.

    Runs on the server's event loop. Each call pays :meth:`picked_up` (a clock read) and
    one check of :attr:`closing`.
    """

    __slots__ = ("_last", "_released", "closing", "observability", "refused")

    def __init__(self, observability: Observability | None = None) -> None:
        #: Set by :meth:`begin`: calls picked up from now on are held, then refused.
        self.closing = False
        #: Calls refused so far.
        self.refused = 0
        self.observability = observability
        self._released: asyncio.Event | None = None
        #: When a call was last picked up (or the loop last fell behind, while draining).
        self._last = float("-inf")

    def picked_up(self) -> bool:
        """Note a call the server picked up; whether it must be held (:meth:`refuse`)."""
        self._last = time.monotonic()
        return self.closing

    def begin(self) -> None:
        """Hold every call picked up from now on."""
        if not self.closing:
            self._released = asyncio.Event()
            self.closing = True

    async def settle(self, window: float) -> float:
        """Wait until no call has come in for :data:`QUIET` seconds while the loop kept
        up (and at least :data:`MIN_BUSY_DRAIN` seconds after a busy second), or
        ``window`` seconds; the seconds waited."""
        started = time.monotonic()
        end = started + window
        busy = started - self._last < _RECENT
        shortest = started + (MIN_BUSY_DRAIN if busy else 0.0)
        self._last = max(self._last, started)
        while True:
            asked = time.monotonic()
            if asked >= end:
                break
            await asyncio.sleep(_TICK)
            now = time.monotonic()
            if now - asked > _TICK + _LATE:
                self._last = now
            if now - self._last >= QUIET and now >= shortest:
                break
        return time.monotonic() - started

    def release(self) -> None:
        """Refuse the held calls (after the transport has begun its shutdown)."""
        if self._released is not None:
            self._released.set()

    async def refuse(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> NoReturn:
        """Hold a call until :meth:`release` (or just before its deadline), then refuse it."""
        released = self._released
        if released is not None and not released.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(released.wait(), deadline_budget(context.time_remaining()))
        self._last = time.monotonic()
        self.refused += 1
        rejection = stopping_rejection(
            str(getattr(request, "pack", "") or getattr(request, "name", "")),
            str(getattr(request, "request_id", "")),
        )
        if self.observability is not None:
            self.observability.emit_rejection(rejection, request_id=rejection.request_id or None)
        await context.abort_with_status(wire.refusal(rejection))
        raise AssertionError("unreachable")  # pragma: no cover
