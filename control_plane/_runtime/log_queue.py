"""Bounded writer queues on the standard library's ``QueueHandler`` and ``QueueListener``.

:class:`Batches` is the one writer queue of the process: a bounded ``queue.Queue`` whose
items a thread of its own (a ``QueueListener``) hands on in batches. A ``put`` never
blocks: when the queue is full the item is refused and the caller counts it. The log
handler (:class:`QueuedStreamHandler`, issue 34), every queued event sink and the
buffered event stream (``_features/observability/events.py``) write through one.

The log handler is a ``QueueHandler``: the caller formats (the formatter scrubs) and
enqueues; the writer thread writes what gathered in ``os.write`` calls of whole lines. A
stalled stream drops and counts lines (:func:`dropped_lines`,
``output_dropped{channel="log"}``) and says how many once it moves. A stream without a file
descriptor (a ``StringIO``: memory, no I/O) is written at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from logging.handlers import QueueHandler, QueueListener
from typing import Any, TextIO

__all__ = [
    "LOG_LINGER",
    "MAX_QUEUED_LINES",
    "PIPE_BUF",
    "Batches",
    "QueuedStreamHandler",
    "dropped_lines",
    "flush_logs",
    "pipe_chunks",
]

#: Lines a handler holds for a stalled stream; past it, new lines are dropped.
MAX_QUEUED_LINES = 2048
#: Seconds the writer lets lines gather after the first one before it writes them.
LOG_LINGER = 0.01
#: Bytes one ``write(2)`` of whole lines may carry: a pipe takes that much atomically (POSIX
#: ``PIPE_BUF`` on Linux), so the lines of processes sharing one pipe never interleave.
PIPE_BUF = 4096


def pipe_chunks(lines: Iterable[bytes]) -> Iterator[bytes]:
    """``lines`` joined into chunks of whole lines of at most :data:`PIPE_BUF` bytes (a
    longer line alone)."""
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        if chunk and size + len(line) > PIPE_BUF:
            yield b"".join(chunk)
            chunk, size = [], 0
        chunk.append(line)
        size += len(line)
    if chunk:
        yield b"".join(chunk)


_BATCHES: weakref.WeakSet[Batches] = weakref.WeakSet()
#: What :meth:`Batches.close` queues: the items before it are written, then the thread ends.
_CLOSE = object()


class Batches(QueueListener):
    """A bounded queue whose items a thread of its own, named ``name``, hands to ``write``
    in batches: what arrives within ``linger`` seconds of the first item (less once the
    queue is half full, or someone flushes) goes in one call, in order.

    :meth:`put` never blocks and is refused (``False``) when the queue is full or closed.
    The thread starts with the first item; a forked child starts its own (its parent's
    queued items are the parent's to write). ``write`` must not raise.
    """

    def __init__(
        self, write: Callable[[list[Any]], None], *, capacity: int, linger: float, name: str
    ) -> None:
        # SimpleQueue (C, no Python lock): its bound is checked on put (threads putting at
        # once may pass it by one item each; a flush's marker never counts).
        self._items: queue.SimpleQueue[Any] = queue.SimpleQueue()
        super().__init__(self._items)
        self._write = write
        self.capacity = max(1, capacity)
        self.linger = linger
        self.name = name
        self._hurry = threading.Event()  # a flush, close or burst: stop lingering
        self._lock = threading.Lock()
        self._started = False
        self._stopping = False
        self.closed = False
        _BATCHES.add(self)

    def _reset(self) -> None:
        self._items = queue.SimpleQueue()
        self.queue = self._items
        self._hurry = threading.Event()
        self._lock = threading.Lock()
        self._started = self._stopping = False
        self._thread = None

    def put(self, item: Any) -> bool:
        """Queue ``item``; ``False`` (and nothing queued) when full or closed."""
        if self.closed:
            return False
        if not self._started:
            with self._lock:
                if not self._started:
                    self.start()
                    if self._thread is not None:
                        self._thread.name = self.name
                    self._started = True
        size = self._items.qsize()
        if size >= self.capacity:
            return False
        self._items.put(item)
        if size + 1 == self.capacity // 2:
            self._hurry.set()  # a burst: write now rather than fill the queue
        return True

    def dequeue(self, block: bool) -> Any:
        """What gathered: a list of items; ``queue.Empty`` (what ends a listener's thread)
        once :meth:`close` was reached."""
        if self._stopping:
            raise queue.Empty
        first = self._items.get()
        if first is _CLOSE:
            raise queue.Empty
        # Let the items of the calls that follow join this batch (flush ends the wait).
        self._hurry.wait(self.linger)
        self._hurry.clear()
        batch = [first]
        while True:
            try:
                item = self._items.get_nowait()
            except queue.Empty:
                break
            if item is _CLOSE:
                self._stopping = True
                break
            batch.append(item)
        return batch

    def handle(self, record: Any) -> None:
        """Write one batch, then release the flushes waiting on it."""
        items = [item for item in record if not isinstance(item, threading.Event)]
        if items:
            self._write(items)
        for item in record:
            if isinstance(item, threading.Event):
                item.set()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait (up to ``timeout`` seconds) until everything queued before is written."""
        if not self._started:
            return True
        if self.closed:  # what was queued is written before the thread ends
            thread = self._thread
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)
            return thread is None or not thread.is_alive()
        marker = threading.Event()
        self._items.put(marker)
        self._hurry.set()
        return marker.wait(timeout)

    def close(self) -> None:
        """Refuse new items; the thread writes what is queued, then ends."""
        self.closed = True
        if self._started:
            self._items.put(_CLOSE)
            self._hurry.set()


def _after_fork() -> None:
    """A forked child has none of its parent's threads: its queues start their own."""
    for batches in list(_BATCHES):
        batches._reset()


os.register_at_fork(after_in_child=_after_fork)


# -- the log handler --------------------------------------------------------------------

_DROPPED_LOCK = threading.Lock()
_dropped = 0


def dropped_lines() -> int:
    """Log lines every :class:`QueuedStreamHandler` of this process dropped."""
    return _dropped


def _fd(stream: TextIO) -> int | None:
    """``stream``'s file descriptor, ``None`` for one in memory (a ``StringIO``)."""
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):
        return None


def _write(stream: TextIO, lines: list[str]) -> None:
    """``lines`` to ``stream``: straight to its file descriptor in writes of whole lines
    (:func:`pipe_chunks`), never through the text buffer that ``print`` fills in other
    threads, where a line of ours would land in the middle of theirs. A stream without a
    descriptor (a ``StringIO``) gets ``write``."""
    fd = _fd(stream)
    if fd is None:
        stream.write("".join(lines))
        stream.flush()
        return
    encoding = getattr(stream, "encoding", None) or "utf-8"
    for chunk in pipe_chunks(line.encode(encoding, "backslashreplace") for line in lines):
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view) :]


_HANDLERS: weakref.WeakSet[QueuedStreamHandler] = weakref.WeakSet()


def flush_logs(timeout: float = 2.0) -> None:
    """Write the lines every handler holds now: what a process logged before it prints
    (a server's banner) comes before it."""
    for handler in list(_HANDLERS):
        handler.flush(timeout)


class QueuedStreamHandler(QueueHandler):
    """A stream handler whose writes happen on a thread of its own (module docs)."""

    def __init__(
        self,
        stream: TextIO | None = None,
        capacity: int = MAX_QUEUED_LINES,
        linger: float = LOG_LINGER,
    ) -> None:
        self._batches = Batches(
            self._write_lines, capacity=capacity, linger=linger, name="log-writer"
        )
        super().__init__(self._batches.queue)
        self._stream = stream
        self.capacity = capacity
        self._missed = 0  # dropped since the last lines written
        _HANDLERS.add(self)

    def _target(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def prepare(self, record: logging.LogRecord) -> str:
        """The record's line, formatted (and so scrubbed) on the thread that logged."""
        return self.format(record) + "\n"

    def enqueue(self, record: Any) -> None:
        stream = self._target()
        if _fd(stream) is None:  # memory: nothing can stall (logging holds self.lock)
            _write(stream, [record])
            return
        if not self._batches.put(record):
            global _dropped  # noqa: PLW0603 - one process-wide counter, read by the metric
            with _DROPPED_LOCK:
                _dropped += 1
                self._missed += 1

    def _write_lines(self, lines: list[str]) -> None:
        with _DROPPED_LOCK:
            missed, self._missed = self._missed, 0
        if missed:  # the dropped lines came after the ones queued before them
            lines.append(
                f"capability_packs: {missed} log line(s) dropped: the log stream stalled\n"
            )
        with contextlib.suppress(OSError, ValueError):  # stderr gone: nobody to tell
            _write(self._target(), lines)

    def flush(self, timeout: float = 2.0) -> None:
        """Wait (up to ``timeout`` seconds) for the queued lines to be written."""
        self._batches.flush(timeout)
