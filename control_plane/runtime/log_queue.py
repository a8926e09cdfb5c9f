"""Log lines written by a thread of their own, through a bounded queue (issue 34).

The caller formats (the formatter scrubs) and appends; a writer thread writes what
gathered in one ``os.write`` of whole lines. A stalled stream drops and counts lines
(:func:`dropped_lines`, ``output_dropped{channel="log"}``) and says how many once it moves.
A stream without a file descriptor (a ``StringIO``: memory, no I/O) is written at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import weakref
from collections import deque
from typing import TextIO

__all__ = [
    "LOG_LINGER",
    "MAX_QUEUED_LINES",
    "QueuedStreamHandler",
    "dropped_lines",
    "flush_logs",
]

#: Lines a handler holds for a stalled stream; past it, new lines are dropped.
MAX_QUEUED_LINES = 2048
#: Seconds the writer lets lines gather after the first one before it writes them.
LOG_LINGER = 0.01

_DROPPED_LOCK = threading.Lock()
_dropped = 0


def dropped_lines() -> int:
    """Log lines every :class:`QueuedStreamHandler` of this process dropped."""
    return _dropped


def _count_drop() -> None:
    global _dropped  # noqa: PLW0603 - one process-wide counter, read by the metric
    with _DROPPED_LOCK:
        _dropped += 1


#: Bytes one ``write(2)`` of whole lines may carry: a pipe takes that much atomically.
PIPE_BUF = 4096


def _fd(stream: TextIO) -> int | None:
    """``stream``'s file descriptor, ``None`` for one in memory (a ``StringIO``)."""
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):
        return None


def _write(stream: TextIO, lines: list[str]) -> None:
    """``lines`` to ``stream``: straight to its file descriptor in writes of whole lines
    (at most :data:`PIPE_BUF` bytes each, a longer line alone), never through the text
    buffer that ``print`` fills in other threads, where a line of ours would land in the
    middle of theirs. A stream without a descriptor (a ``StringIO``) gets ``write``."""
    fd = _fd(stream)
    if fd is None:
        stream.write("".join(lines))
        stream.flush()
        return
    encoding = getattr(stream, "encoding", None) or "utf-8"
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        data = line.encode(encoding, "backslashreplace")
        if chunk and size + len(data) > PIPE_BUF:
            _write_all(fd, b"".join(chunk))
            chunk, size = [], 0
        chunk.append(data)
        size += len(data)
    if chunk:
        _write_all(fd, b"".join(chunk))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


_HANDLERS: weakref.WeakSet[QueuedStreamHandler] = weakref.WeakSet()


def _after_fork() -> None:
    """A forked child has none of its parent's threads: its handlers start their own."""
    for handler in list(_HANDLERS):
        handler._reset()


os.register_at_fork(after_in_child=_after_fork)


def flush_logs(timeout: float = 2.0) -> None:
    """Write the lines every handler holds now: what a process logged before it prints
    (a server's banner) comes before it."""
    for handler in list(_HANDLERS):
        handler.flush(timeout)


class QueuedStreamHandler(logging.Handler):
    """A stream handler whose writes happen on a thread of its own (module docs)."""

    def __init__(
        self,
        stream: TextIO | None = None,
        capacity: int = MAX_QUEUED_LINES,
        linger: float = LOG_LINGER,
    ) -> None:
        super().__init__()
        self._stream = stream
        self.capacity = capacity
        self.linger = linger
        self._lines: deque[str] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._idle = True  # the writer waits for a first line (or has not started)
        self._missed = 0  # dropped since the last line written
        self._hurry = threading.Event()  # a flush: stop lingering
        self._thread: threading.Thread | None = None
        _HANDLERS.add(self)

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._hurry = threading.Event()
        self._idle = True
        self._thread = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + "\n"
        # Logging's own contract: a record that cannot be formatted is reported by
        # handleError, never raised into the code that logged.
        except Exception:  # noqa: BLE001
            self.handleError(record)
            return
        stream = self._stream if self._stream is not None else sys.stderr
        if _fd(stream) is None:  # memory: nothing can stall (logging holds self.lock)
            _write(stream, [line])
            return
        with self._cond:
            if len(self._lines) >= self.capacity:
                self._missed += 1
                _count_drop()
                return
            self._lines.append(line)
            if len(self._lines) == self.capacity // 2:
                self._hurry.set()  # a burst: write now rather than fill the queue
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="log-writer", daemon=True)
                self._thread.start()
            elif self._idle:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._lines:
                    self._idle = True
                    self._cond.notify_all()  # flush() waits for this
                    self._cond.wait()
                self._idle = False
            # Let the lines of the calls that follow join this write (flush ends it).
            self._hurry.wait(self.linger)
            with self._cond:
                lines = list(self._lines)
                self._lines.clear()
                missed, self._missed = self._missed, 0
                self._hurry.clear()
            if missed:  # the dropped lines came after the ones queued before them
                lines.append(
                    f"capability_packs: {missed} log line(s) dropped: the log stream stalled\n"
                )
            stream = self._stream if self._stream is not None else sys.stderr
            with contextlib.suppress(OSError, ValueError):  # stderr gone: nobody to tell
                _write(stream, lines)

    def flush(self, timeout: float = 2.0) -> None:
        """Wait (up to ``timeout`` seconds) for the queued lines to be written."""
        with self._cond:
            if self._thread is None:
                return
            self._hurry.set()
            self._cond.wait_for(lambda: not self._lines and self._idle, timeout)
