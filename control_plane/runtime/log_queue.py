"""Log lines written off the caller's thread, through a bounded queue.

A ``logging.StreamHandler`` writes in the thread that logs -- on a server, the event
loop -- and a stderr pipe nobody drains blocks that write, so the server stopped
answering after ~110 refused calls. :class:`QueuedStreamHandler` formats the record in
the caller's thread (the formatter scrubs); when nothing waits and the stream takes a
write now (``poll``), the line is written at once, in order with what the caller prints;
otherwise it is queued and one thread writes. When the stream stalls and
:data:`MAX_QUEUED_LINES` lines wait, new lines are dropped and counted
(:func:`dropped_lines`, the ``output_dropped{channel="log"}`` metric), and one line says
how many once the stream moves again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import sys
import threading
from collections import deque
from typing import TextIO

__all__ = ["MAX_QUEUED_LINES", "QueuedStreamHandler", "dropped_lines"]

#: Lines a handler holds for a stalled stream; past it, new lines are dropped.
MAX_QUEUED_LINES = 2048

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


def _write(stream: TextIO, lines: list[str]) -> None:
    """``lines`` to ``stream``: straight to its file descriptor in writes of whole lines
    (at most :data:`PIPE_BUF` bytes each, a longer line alone), never through the text
    buffer that ``print`` fills in other threads, where a line of ours would land in the
    middle of theirs. A stream without a descriptor (a ``StringIO``) gets ``write``."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
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


def _ready(stream: TextIO) -> bool:
    """Whether ``stream`` takes a write without blocking now (a pipe with room, a file, a
    terminal); a stream without a descriptor always does."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    try:
        return bool(poller.poll(0))
    except OSError:
        return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class QueuedStreamHandler(logging.Handler):
    """A stream handler whose writes happen on a thread of its own (module docs)."""

    def __init__(self, stream: TextIO | None = None, capacity: int = MAX_QUEUED_LINES) -> None:
        super().__init__()
        self._stream = stream
        self.capacity = capacity
        self._lines: deque[str] = deque()
        self._cond = threading.Condition()
        self._writing = False
        self._missed = 0  # dropped since the last line written
        self._thread: threading.Thread | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + "\n"
        # Logging's own contract: a record that cannot be formatted is reported by
        # handleError, never raised into the code that logged.
        except Exception:  # noqa: BLE001
            self.handleError(record)
            return
        stream = self._stream if self._stream is not None else sys.stderr
        with self._cond:
            # Nothing waiting and the stream takes a write now: written here, in order
            # with what this thread prints (a banner after a log line stays after it).
            direct = (
                len(line) <= PIPE_BUF and not self._lines and not self._writing and _ready(stream)
            )
            if direct:
                self._writing = True
            elif len(self._lines) >= self.capacity:
                self._missed += 1
                _count_drop()
                return
            else:
                self._lines.append(line)
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="log-writer", daemon=True
                    )
                    self._thread.start()
                self._cond.notify_all()
                return
        try:
            with contextlib.suppress(OSError, ValueError):  # stderr gone: nobody to tell
                _write(stream, [line])
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._lines or self._writing:
                    self._cond.wait()
                lines = list(self._lines)
                self._lines.clear()
                missed, self._missed = self._missed, 0
                self._writing = True
            if missed:
                lines.append(
                    f"capability_packs: {missed} log line(s) dropped: the log stream stalled\n"
                )
            stream = self._stream if self._stream is not None else sys.stderr
            try:
                with contextlib.suppress(OSError, ValueError):  # stderr gone: nobody to tell
                    _write(stream, lines)
            finally:
                with self._cond:
                    self._writing = False
                    self._cond.notify_all()

    def flush(self, timeout: float = 2.0) -> None:
        """Wait (up to ``timeout`` seconds) for the queued lines to be written."""
        with self._cond:
            self._cond.wait_for(lambda: not self._lines and not self._writing, timeout)
