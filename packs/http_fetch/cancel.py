"""Cancellation that reaches the socket: a watcher thread shuts down cancelled fetches' sockets."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Final

__all__ = ["POLL", "Watch", "watching"]

#: Seconds between two looks at the flags.
POLL: Final = 0.05


class Watch:
    """One fetch: its cancellation flag and the socket it is using now."""

    __slots__ = ("cancelled", "sock")

    def __init__(self, cancelled: Callable[[], bool]) -> None:
        self.cancelled = cancelled
        self.sock: socket.socket | None = None

    def shut(self) -> None:
        """Shut the socket down in both directions (wakes a blocked connect or recv)."""
        sock = self.sock
        if sock is None:
            return
        with contextlib.suppress(OSError):
            # The base class's method on the descriptor: a TLS socket's own shutdown would
            # tear down its SSL object under the thread that is reading through it.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watcher:
    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        """Fresh state (and, in a forked child, no lock the parent's threads held)."""
        self._lock = threading.Condition()
        self._live: set[Watch] = set()
        self._thread: threading.Thread | None = None

    def add(self, watch: Watch) -> None:
        with self._lock:
            self._live.add(watch)
            if self._thread is None or not self._thread.is_alive():  # first use, or a fork
                self._thread = threading.Thread(
                    target=self._run, name="http.fetch-cancel", daemon=True
                )
                self._thread.start()
            self._lock.notify()

    def discard(self, watch: Watch) -> None:
        with self._lock:
            self._live.discard(watch)

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._live:
                    self._lock.wait()
                live = list(self._live)
            for watch in live:
                if watch.cancelled():
                    watch.shut()
            with self._lock:
                self._lock.wait(POLL)


_WATCHER: Final = _Watcher()
os.register_at_fork(after_in_child=_WATCHER._reset)


@contextlib.contextmanager
def watching(cancelled: Callable[[], bool]) -> Iterator[Watch]:
    """A :class:`Watch` shut down when ``cancelled()`` turns true, for the ``with`` block."""
    watch = Watch(cancelled)
    _WATCHER.add(watch)
    try:
        yield watch
    finally:
        _WATCHER.discard(watch)
