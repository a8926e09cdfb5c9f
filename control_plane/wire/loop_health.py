"""The serving event loop's health: how long it was held without serving anyone.

Everything a server answers runs on one event loop; code that holds it (a slow
``__str__`` formatted on the loop, a blocking write) stalls every caller at once. A
:class:`LoopHealth` task wakes every :data:`TICK` seconds and measures how late it woke:
that lateness is the time the loop was held by something else. The longest one since
start and the number over :data:`~control_plane.runtime.metrics.STALL_SECONDS` are the
metrics ``capability_packs_event_loop_longest_stall_seconds`` and
``capability_packs_event_loop_stalls_total`` (docs/observability.md).
"""

from __future__ import annotations

import asyncio
import contextlib

from control_plane.runtime.metrics import STALL_SECONDS

__all__ = ["TICK", "LoopHealth"]

#: Seconds between the monitor's wake-ups (its cost: one timer per tick).
TICK = 0.025


class LoopHealth:
    """A task on the loop measuring its own lateness (module docs)."""

    def __init__(self, tick: float = TICK) -> None:
        self.tick = tick
        self.longest = 0.0
        self.stalls = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start watching the running loop (idempotent)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch(), name="loop-health")

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            expected = loop.time() + self.tick
            await asyncio.sleep(self.tick)
            late = loop.time() - expected
            self.longest = max(self.longest, late)
            if late > STALL_SECONDS:
                self.stalls += 1

    def read(self) -> tuple[float, int]:
        """(longest stall in seconds, stalls over the threshold) so far."""
        return self.longest, self.stalls

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
