"""Errors as events: one structured record per failed call or refused request
(``schemas/error-event.schema.json``), fanned out to sinks, each behind a bounded queue;
:class:`ErrorEvents` is a built-in plugin on the ``call_finished`` and ``request_refused``
hooks (docs/observability.md)."""

from __future__ import annotations

import errno
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any, TypeAlias

import orjson

from control_plane._kernel.error_event import (
    CORRELATION_METADATA_KEYS,
    CORRELATION_METADATA_PREFIX,
    ErrorEvent,
    EventKind,
    clean_correlation,
    correlation_from_metadata,
    correlation_scope,
    current_correlation,
    one_line,
    parse_rfc3339,
    reset_correlation,
    rfc3339,
    set_correlation,
)
from control_plane._kernel.errors import RequestRejected
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.registry import LoadedPack
from control_plane._kernel.rejection import Rejection
from control_plane._runtime.log_queue import PIPE_BUF, Batches, pipe_chunks

__all__ = [
    "CORRELATION_METADATA_KEYS",
    "CORRELATION_METADATA_PREFIX",
    "PIPE_BUF",
    "ErrorEvent",
    "ErrorEvents",
    "EventKind",
    "EventSink",
    "FileSink",
    "SinkQueue",
    "StreamSink",
    "clean_correlation",
    "correlation_from_metadata",
    "correlation_scope",
    "current_correlation",
    "fitted_line",
    "one_line",
    "parse_rfc3339",
    "reset_correlation",
    "rfc3339",
    "set_correlation",
]

logger = logging.getLogger("capability_packs.events")

# -- sinks -------------------------------------------------------------------------------

#: A sink: any callable taking one event. It runs on the thread that finished the call
#: (often the event loop), so it must return quickly; hand slow work to a thread.
EventSink: TypeAlias = Callable[[ErrorEvent], None]


#: Lines a buffered stream sink holds before the caller waits for the stream (backpressure
#: when the stream is slow: nothing is dropped). Its writes are whole lines in chunks of at
#: most :data:`PIPE_BUF` bytes, so the lines of several processes sharing one stderr pipe
#: (``serve --workers N``) never interleave.
MAX_PENDING_LINES = 4096


def fitted_line(event: ErrorEvent, limit: int = PIPE_BUF) -> bytes:
    """The event's JSON line and its newline in at most ``limit`` bytes, for a pipe.

    An event line is bounded, but not by a pipe's atomic write: 16 correlation ids of 256
    characters (the caller's to choose) make ~5 KB, and a longer write to a pipe several
    workers share may interleave with theirs. Such a line gets its correlation values cut
    further (ending ``...``, as values over 256 characters already are), then its message,
    then its pack name and request id; every key stays.
    """
    line = event.to_json()
    if len(line) < limit:
        return line + b"\n"
    data = orjson.loads(line)
    correlation = data.get("correlation")
    if isinstance(correlation, dict):
        for cap in (128, 64, 32, 16, 8):
            data["correlation"] = {key: _cut(value, cap) for key, value in correlation.items()}
            line = one_line(orjson.dumps(data))
            if len(line) < limit:
                return line + b"\n"
    message = data.get("message")
    if isinstance(message, str):
        for cap in (1024, 512, 256, 128, 64):
            data["message"] = _cut(message, cap)
            line = one_line(orjson.dumps(data))
            if len(line) < limit:
                return line + b"\n"
    # A caller's pack name and request id (256 characters each, control characters
    # escaped to six bytes apiece) can still overflow it: cut those last.
    whole = {key: data.get(key) for key in ("pack", "request_id")}
    for cap in (128, 64, 32, 16):
        for key, value in whole.items():
            data[key] = _cut(value, cap)
        line = one_line(orjson.dumps(data))
        if len(line) < limit:
            break
    return line + b"\n"


def _cut(value: Any, cap: int) -> Any:
    return value[: cap - 3] + "..." if isinstance(value, str) and len(value) > cap else value


class StreamSink:
    """JSON lines to a text stream; ``sys.stderr`` (looked up per write) by default.

    ``delay=0`` (the default) writes and flushes each line as its event arrives. ``delay >
    0`` (what ``packctl serve`` uses) takes the write off the serving thread: lines are
    queued (:class:`~control_plane._runtime.log_queue.Batches`) and a background thread
    writes them at most ``delay`` seconds after the first queued one, in chunks of whole
    lines of at most :data:`PIPE_BUF` bytes, one ``write`` and ``flush`` per chunk; a longer
    line is cut to fit (:func:`fitted_line`). ``flush()`` writes what is queued now;
    ``close()`` flushes and stops the thread. Lines arrive up to ``delay`` late, in order; a
    process killed outright loses at most that much (the incident store's rows are held the
    same way). With :data:`MAX_PENDING_LINES` queued, the caller waits for the stream.
    """

    def __init__(self, stream: IO[str] | None = None, *, delay: float = 0.0) -> None:
        self._stream = stream
        self._write_lock = threading.Lock()  # the stream: one writer, lines in order
        self._batches = (
            Batches(self._write, capacity=MAX_PENDING_LINES, linger=delay, name="event-stream")
            if delay > 0
            else None
        )

    def __call__(self, event: ErrorEvent) -> None:
        line = fitted_line(event)
        batches = self._batches
        if batches is None or batches.closed:
            self._write([line])
        elif not batches.put(line):  # the stream is slow: the caller waits, nothing is lost
            batches.flush()
            self._write([line])

    def flush(self) -> None:
        """Write every queued line now."""
        if self._batches is not None:
            self._batches.flush()

    def _write(self, lines: list[bytes]) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        with self._write_lock:
            for chunk in pipe_chunks(lines):
                stream.write(chunk.decode())
                stream.flush()

    def close(self) -> None:
        """Write what is queued and stop the background thread (idempotent)."""
        if self._batches is not None:
            self._batches.flush(5.0)
            self._batches.close()

    def __repr__(self) -> str:
        name = getattr(self._stream, "name", "stderr") if self._stream is not None else "stderr"
        return f"StreamSink({name})"


class FileSink:
    """JSON lines appended to a file: line-buffered, thread-safe, one line per event.

    Each event is one ``write`` of one line to a file opened in append mode, so several
    processes may share the file without interleaving lines. The directory is created.
    Rotation is followed: when the file at ``path`` is no longer the one open (renamed
    away by logrotate, removed), the next event opens ``path`` afresh; a file truncated
    in place (``copytruncate``) is appended to from its new end.

    A write cut short (disk full) leaves a torn line and raises ``OSError`` (logged, counted
    in ``ErrorEvents.sink_errors``); the next event, from any writer, starts on a new line
    (the file's last byte is read before each write), so only the torn event is lost.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._identity: tuple[int, int] | None = None
        self._closed = False
        self._open()

    def _open(self) -> IO[bytes]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # read too: the last byte is checked before each write (a torn line, see above)
        file = open(self.path, "a+b", buffering=0)  # noqa: SIM115
        st = os.fstat(file.fileno())
        self._file, self._identity = file, (st.st_dev, st.st_ino)
        return file

    def __call__(self, event: ErrorEvent) -> None:
        line = event.to_json() + b"\n"
        with self._lock:
            if self._closed:
                raise ValueError(f"event file {self.path} is closed")
            file = self._file
            try:
                st = os.stat(self.path)
                moved = (st.st_dev, st.st_ino) != self._identity
            except FileNotFoundError:
                moved = True
            if moved or file is None:  # rotated or removed: write at ``path`` again
                if file is not None:
                    file.close()
                    self._file = None
                file = self._open()  # raises (the event is skipped, logged) until it can
                st = os.fstat(file.fileno())
            if st.st_size and os.pread(file.fileno(), 1, st.st_size - 1) != b"\n":
                # A line torn by a full disk (this process's or another writer's) ends
                # without a newline: start this event on a line of its own.
                line = b"\n" + line
            written = file.write(line)
            if written is not None and written < len(line):
                raise OSError(
                    errno.ENOSPC,
                    f"event line cut short after {written} of {len(line)} bytes "
                    "(disk full or file size limit); the next event starts a new line",
                    str(self.path),
                )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None

    def __repr__(self) -> str:
        return f"FileSink({str(self.path)!r})"


# -- sinks off the caller's thread ----------------------------------------------------------

#: Events a queued sink may have waiting; past it, new events are dropped and counted.
SINK_QUEUE_EVENTS = 1024
#: Seconds a queued sink's thread lets events gather before it delivers them.
SINK_LINGER = 0.02

SinkFailure: TypeAlias = Callable[[EventSink, ErrorEvent, BaseException], None]


def _sink_name(sink: EventSink) -> str:
    """A sink's name for a log line, whatever its ``__repr__`` does."""
    name = getattr(type(sink), "__qualname__", "sink")
    return name if isinstance(name, str) else "sink"


def _deliver(sink: EventSink, event: ErrorEvent, failed: SinkFailure) -> None:
    try:
        sink(event)
    # Sink boundary: a plugin's sink may raise anything -- SystemExit, KeyboardInterrupt,
    # GeneratorExit included -- and neither the call nor the server may end because of it.
    except BaseException as exc:  # noqa: BLE001
        failed(sink, event, exc)


class SinkQueue:
    """One sink on a thread of its own, fed by a bounded queue.

    :meth:`put` never blocks: when the sink stalls (a FIFO nobody reads, a hung disk, a
    plugin that sleeps) and :data:`SINK_QUEUE_EVENTS` events wait, new ones are dropped
    and counted (:attr:`dropped`, the ``output_dropped`` metric). Whatever the sink
    raises is contained (:func:`_deliver`). The thread wakes once per :data:`SINK_LINGER`
    and delivers what gathered, so a failed call costs an append, not a thread switch.
    """

    def __init__(
        self,
        sink: EventSink,
        failed: SinkFailure,
        capacity: int = SINK_QUEUE_EVENTS,
        linger: float = SINK_LINGER,
    ) -> None:
        self.sink = sink
        self.dropped = 0
        self._failed = failed
        self._batches = Batches(self._deliver, capacity=capacity, linger=linger, name="event-sink")

    def _deliver(self, events: list[ErrorEvent]) -> None:
        for event in events:
            _deliver(self.sink, event, self._failed)

    def put(self, event: ErrorEvent) -> None:
        if not self._batches.put(event) and not self._batches.closed:
            self.dropped += 1

    def join(self, deadline: float) -> bool:
        """Wait until the queue is empty and the sink idle, or until ``deadline``."""
        return self._batches.flush(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        self._batches.close()


# -- the emitter -------------------------------------------------------------------------


class ErrorEvents:
    """Builds error events and hands each to every sink.

    A plugin on the ``call_finished`` and ``request_refused`` hooks (``install`` registers
    it with the invoker); each of its sinks runs behind a bounded queue when ``queued``.
    """

    def __init__(self, sinks: Iterable[EventSink] = (), *, queued: bool = False) -> None:
        #: ``queued``: each sink runs on a thread of its own behind a bounded queue
        #: (:class:`SinkQueue`), so the caller -- the server's event loop -- never waits
        #: for a sink; ``False`` calls each sink in the caller's thread (embedders, tests).
        self.queued = queued
        self._lock = threading.Lock()
        self._sinks: tuple[EventSink, ...] = ()
        self._queues: dict[int, SinkQueue] = {}
        #: Sinks called in the caller's thread although ``queued`` (see :meth:`add_sink`).
        self._inline: tuple[EventSink, ...] = ()
        #: Events emitted since creation (sink failures do not count against it).
        self.emitted = 0
        #: Sink calls that raised (each logged).
        self.sink_errors = 0
        for sink in sinks:
            self.add_sink(sink)

    @property
    def sinks(self) -> tuple[EventSink, ...]:
        return self._sinks

    @property
    def dropped(self) -> int:
        """Events a queued sink lost because its queue was full (the sink stalled)."""
        return sum(queue.dropped for queue in list(self._queues.values()))

    def add_sink(self, sink: EventSink, *, queued: bool = True) -> None:
        """Add ``sink``. ``queued=False`` calls it in the caller's thread even when the
        emitter queues: only for a sink that itself just hands the event to a bounded
        queue and never blocks (the incident store's ``add_event``), which a queue and
        thread in front would only cost a thread hop per event."""
        if not callable(sink):
            raise TypeError(f"an event sink must be callable, got {type(sink).__name__}")
        with self._lock:
            self._sinks = (*self._sinks, sink)
            if self.queued and queued:
                self._queues[id(sink)] = SinkQueue(sink, self._failed)
            elif self.queued:
                self._inline = (*self._inline, sink)

    def remove_sink(self, sink: EventSink) -> None:
        with self._lock:
            self._sinks = tuple(s for s in self._sinks if s != sink)
            self._inline = tuple(s for s in self._inline if s != sink)
            queue = self._queues.pop(id(sink), None)
        if queue is not None:
            queue.close()

    def emit(self, event: ErrorEvent) -> None:
        """Hand ``event`` to every sink; a sink that raises is logged and skipped."""
        self.emitted += 1
        if self.queued:
            for queue in list(self._queues.values()):
                queue.put(event)
            for sink in self._inline:
                _deliver(sink, event, self._failed)
            return
        for sink in self._sinks:
            _deliver(sink, event, self._failed)

    def _failed(self, sink: EventSink, event: ErrorEvent, exc: BaseException) -> None:
        self.sink_errors += 1
        logger.error(
            "event sink %r raised %s; event %s skipped",
            _sink_name(sink),
            type(exc).__name__,
            event.event_id,
        )

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait (up to ``timeout`` seconds) until every queued sink took what it was given;
        ``True`` if they all did."""
        deadline = time.monotonic() + timeout
        return all(q.join(deadline) for q in list(self._queues.values()))

    def close(self, timeout: float = 5.0) -> None:
        """Deliver what is queued (up to ``timeout`` seconds), then stop the sinks' threads."""
        self.flush(timeout)
        with self._lock:
            queues, self._queues = list(self._queues.values()), {}
        for queue in queues:
            queue.close()

    @hookimpl
    def call_finished(self, pack: LoadedPack, outcome: Outcome, elapsed_s: float) -> None:
        """One event per failed outcome, none for successes (every argument taken: an
        implementation naming fewer is called through a wrapper)."""
        if outcome.error is None:
            return
        if not self._sinks:  # nobody listens: count it, build nothing
            self.emitted += 1
            return
        self.emit(ErrorEvent.from_outcome(outcome, elapsed_s=elapsed_s))

    @hookimpl
    def request_refused(self, event: ErrorEvent) -> None:
        """Emit the event of a request refused before any pack ran."""
        self.emit(event)

    def emit_rejection(
        self,
        rejection: Rejection | RequestRejected | str,
        *,
        pack: str = "",
        message: str = "",
        version: str | None = None,
        request_id: str | None = None,
        correlation: Mapping[str, str] | None = None,
    ) -> ErrorEvent:
        """Emit (and return) the event for a request refused before any handler ran
        (see :meth:`ErrorEvent.rejection`)."""
        event = ErrorEvent.rejection(
            rejection,
            pack=pack,
            message=message,
            version=version,
            request_id=request_id,
            correlation=correlation,
        )
        self.emit(event)
        return event
