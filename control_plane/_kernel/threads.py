"""The sync handlers' thread pool, each pack held to its share until its handlers really return."""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["PackThreads", "default_pack_threads", "default_threads"]

T = TypeVar("T")


def _guarded(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """``fn(*args)`` in a pool thread, its exception returned rather than raised: an
    asyncio future holding a ``GeneratorExit`` (or ``KeyboardInterrupt``) re-raises it in
    every coroutine that awaits along the way, even after one handled it."""
    try:
        return True, fn(*args)
    # Pack boundary (a thread): whatever the handler raises goes back as a value.
    except BaseException as exc:  # noqa: BLE001
        return False, exc


def default_threads() -> int:
    """The pool size when none is given: ``min(32, cpus + 4)``, at least 16 (idle threads
    cost nothing; sync handlers mostly wait on I/O)."""
    return max(16, min(32, (os.cpu_count() or 1) + 4))


def default_pack_threads(total: int) -> int:
    """One pack's share of a pool of ``total`` threads when none is given: half of it (one
    pack hanging every call leaves the other half to the rest)."""
    return max(1, total // 2)


class PackThreads:
    """A thread pool whose threads each pack may use only up to its share.

    The counts live under a lock, not on an event loop: a thread may outlive the loop
    that started its call (``asyncio.run`` per call, a server stopped meanwhile), and its
    return must still give its pack's share back.
    """

    def __init__(self, total: int | None = None, per_pack: int | None = None) -> None:
        self.total = total if total is not None and total > 0 else default_threads()
        share = per_pack if per_pack is not None and per_pack > 0 else None
        self.per_pack = min(self.total, share or default_pack_threads(self.total))
        self.executor = ThreadPoolExecutor(max_workers=self.total, thread_name_prefix="pack")
        self._lock = threading.Lock()
        #: pack -> threads it holds (running or queued in the pool, overrunning included).
        self._held: dict[str, int] = {}
        #: pack -> calls that ended (deadline, caller gone) while their thread still runs.
        self._overrun: dict[str, int] = {}
        self._waiting: dict[str, deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]]
        self._waiting = {}

    def held(self, pack: str) -> int:
        """Threads ``pack`` holds now."""
        return self._held.get(pack, 0)

    def overrunning(self, pack: str) -> int:
        """Threads still running handlers of ``pack`` whose calls already ended."""
        return self._overrun.get(pack, 0)

    async def run(self, pack: str, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on one of ``pack``'s threads; waits for one when the pack
        holds its whole share (cancellation -- the call's deadline -- ends the wait)."""
        await self._acquire(pack)
        state = {"overran": False}
        try:
            future: Future[tuple[bool, Any]] = self.executor.submit(_guarded, fn, args)
        except BaseException:
            self._release(pack, state)
            raise
        # The handler really returned (or never started): only now is the thread free.
        future.add_done_callback(lambda _: self._release(pack, state))
        try:
            ok, value = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            with self._lock:
                if not future.done():  # the thread keeps running: counted until it returns
                    state["overran"] = True
                    self._overrun[pack] = self._overrun.get(pack, 0) + 1
            raise
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    async def _acquire(self, pack: str) -> None:
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                held = self._held.get(pack, 0)
                if held < self.per_pack:
                    self._held[pack] = held + 1
                    return
                waiter: asyncio.Future[None] = loop.create_future()
                self._waiting.setdefault(pack, deque()).append((loop, waiter))
            try:
                await waiter
            except asyncio.CancelledError:
                with self._lock:
                    queue = self._waiting.get(pack, deque())
                    if (loop, waiter) in queue:
                        queue.remove((loop, waiter))
                        woken = False
                    else:
                        woken = True
                if woken:
                    self._wake(pack)  # it was woken for a free thread: pass it on
                raise

    def _release(self, pack: str, state: dict[str, bool]) -> None:
        """Runs in the pool thread (or wherever the call ended): under the lock."""
        with self._lock:
            held = self._held.get(pack, 0) - 1
            if held > 0:
                self._held[pack] = held
            else:
                self._held.pop(pack, None)
            if state["overran"]:
                state["overran"] = False
                left = self._overrun.get(pack, 0) - 1
                if left > 0:
                    self._overrun[pack] = left
                else:
                    self._overrun.pop(pack, None)
        self._wake(pack)

    def _wake(self, pack: str) -> None:
        while True:
            with self._lock:
                queue = self._waiting.get(pack)
                if not queue:
                    return
                loop, waiter = queue.popleft()
            try:
                loop.call_soon_threadsafe(_set, waiter)
            except RuntimeError:  # its loop is closed: nobody waits there any more
                continue
            return

    def busy(self) -> int:
        """Threads held by packs now (running a handler, overrunning ones included)."""
        with self._lock:
            return sum(self._held.values())

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def _set(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
