"""The thread pool of sync handlers, shared fairly: each pack gets a bounded share.

A sync handler that hangs cannot be interrupted: past its deadline the caller gets
``timeout``, but the thread stays busy until the handler really returns. With one plain
pool, eight such calls took every thread and starved every other sync pack, built-ins
included. Here:

* the pool has ``total`` threads; each pack may hold at most ``per_pack`` of them at once
  (default: half of the pool), so one pack -- however many of its calls
  hang -- leaves ``total - per_pack`` threads to the others;
* a thread is held by its pack from the moment its call is handed to the pool until the
  handler *really returns*: a call that overran its deadline still counts against its
  pack (:meth:`PackThreads.overrunning`), and admission limits (``--pack-limit``) count
  it too;
* a call over its pack's share waits for one of its own pack's threads, under the
  call's own deadline; it never takes a thread another pack could use.

All bookkeeping runs on the event loop's thread (completions are handed back with
``call_soon_threadsafe``), so plain integers suffice.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
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
    """A thread pool whose threads each pack may use only up to its share (module docs)."""

    def __init__(self, total: int | None = None, per_pack: int | None = None) -> None:
        self.total = total if total is not None and total > 0 else default_threads()
        share = per_pack if per_pack is not None and per_pack > 0 else None
        self.per_pack = min(self.total, share or default_pack_threads(self.total))
        self.executor = ThreadPoolExecutor(max_workers=self.total, thread_name_prefix="pack")
        #: pack -> threads it holds (running or queued in the pool, overrunning included).
        self._held: dict[str, int] = {}
        #: pack -> calls that ended (deadline, caller gone) while their thread still runs.
        self._overrun: dict[str, int] = {}
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    def held(self, pack: str) -> int:
        """Threads ``pack`` holds now."""
        return self._held.get(pack, 0)

    def overrunning(self, pack: str) -> int:
        """Threads still running handlers of ``pack`` whose calls already ended."""
        return self._overrun.get(pack, 0)

    async def run(self, pack: str, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on one of ``pack``'s threads; waits for one when the pack
        holds its whole share (cancellation -- the call's deadline -- ends the wait)."""
        loop = asyncio.get_running_loop()
        if self._held.get(pack, 0) >= self.per_pack:
            await self._wait_for_share(pack, loop)
        self._held[pack] = self._held.get(pack, 0) + 1
        try:
            future: Future[tuple[bool, Any]] = self.executor.submit(_guarded, fn, args)
        except BaseException:
            self._release(pack, False)
            raise
        state = {"awaited": True}

        def returned() -> None:  # on the loop: ordered with the cancellation below
            self._release(pack, not state["awaited"])

        def done(_: Future[tuple[bool, Any]]) -> None:
            # The handler really returned (or never started): only now is the thread free.
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to count
                loop.call_soon_threadsafe(returned)

        future.add_done_callback(done)
        try:
            ok, value = await asyncio.wrap_future(future, loop=loop)
        except asyncio.CancelledError:
            if not future.done():  # the thread keeps running: counted until it returns
                state["awaited"] = False
                self._overrun[pack] = self._overrun.get(pack, 0) + 1
            raise
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    async def _wait_for_share(self, pack: str, loop: asyncio.AbstractEventLoop) -> None:
        queue = self._waiting.setdefault(pack, deque())
        while self._held.get(pack, 0) >= self.per_pack:
            waiter: asyncio.Future[None] = loop.create_future()
            queue.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in queue:
                    queue.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self._wake(pack)  # it was woken for a free thread: pass it on
                raise

    def _release(self, pack: str, overran: bool) -> None:
        held = self._held.get(pack, 0) - 1
        if held > 0:
            self._held[pack] = held
        else:
            self._held.pop(pack, None)
        if overran:
            left = self._overrun.get(pack, 0) - 1
            if left > 0:
                self._overrun[pack] = left
            else:
                self._overrun.pop(pack, None)
        self._wake(pack)

    def _wake(self, pack: str) -> None:
        queue = self._waiting.get(pack)
        while queue:
            waiter = queue.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
