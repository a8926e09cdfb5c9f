"""The serving event loop's health: its longest stall and the number of stalls."""

from __future__ import annotations

import asyncio
import contextlib

from control_plane._features.observability.metrics import STALL_SECONDS

__all__ = ["TICK", "LoopHealth"]

#: Seconds between the monitor's wake-ups (its cost: one timer per tick).
TICK = 0.025


class LoopHealth:
    """A task on the loop measuring its own lateness: the time the loop was held."""

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
