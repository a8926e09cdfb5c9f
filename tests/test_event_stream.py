"""The buffered stream sink ``packctl serve`` writes error events with: off the serving
thread, every line, in order, whole lines per write, pipe-atomic chunks."""

from __future__ import annotations

import io
import json
import threading

from control_plane._features.observability.events import (
    PIPE_BUF,
    ErrorEvent,
    StreamSink,
    fitted_line,
)


class Recorder(io.StringIO):
    """A stream that remembers each write and the thread that made it."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []
        self.threads: set[str] = set()

    def write(self, text: str) -> int:
        self.writes.append(text)
        self.threads.add(threading.current_thread().name)
        return super().write(text)


def _event(i: int, size: int = 0) -> ErrorEvent:
    return ErrorEvent.rejection("overloaded", pack=f"t.p{i}", message=f"m{i} " + "x" * size)


def test_lines_arrive_whole_and_in_order_from_a_background_thread() -> None:
    stream = Recorder()
    sink = StreamSink(stream, delay=0.05)
    events = [_event(i, size=(i * 37) % 900) for i in range(300)]
    for event in events:
        sink(event)
    sink.close()
    lines = stream.getvalue().splitlines()
    assert [json.loads(line)["pack"] for line in lines] == [f"t.p{i}" for i in range(300)]
    for text in stream.writes:
        assert text.endswith("\n")  # whole lines only
        assert len(text.encode()) <= PIPE_BUF  # one pipe-atomic write each
    assert len(stream.writes) < 300  # lines were gathered
    assert stream.threads <= {"event-stream", threading.current_thread().name}


class _Long:
    """Any event whose JSON line is longer than a pipe write (events' texts are bounded,
    so a real one would need a plugin sink's own event type)."""

    def to_json(self) -> bytes:
        return json.dumps({"pack": "t.p1", "pad": "x" * (3 * PIPE_BUF)}).encode()


def test_a_line_longer_than_a_pipe_write_goes_alone() -> None:
    stream = Recorder()
    sink = StreamSink(stream, delay=0.05)
    sink(_event(0))
    sink(_Long())  # type: ignore[arg-type]
    sink(_event(2))
    sink.flush()
    assert [json.loads(w)["pack"] for w in stream.writes if len(w) > PIPE_BUF] == ["t.p1"]
    assert len(stream.getvalue().splitlines()) == 3
    sink.close()


def test_unbuffered_by_default_and_after_close() -> None:
    stream = Recorder()
    sink = StreamSink(stream)
    sink(_event(0))
    assert len(stream.writes) == 1  # written before the call returned
    buffered = StreamSink(stream, delay=60.0)
    buffered.close()
    buffered(_event(1))  # a closed sink writes at once
    assert len(stream.getvalue().splitlines()) == 2


def test_many_threads_lose_nothing() -> None:
    stream = Recorder()
    sink = StreamSink(stream, delay=0.01)

    def emit(t: int) -> None:
        for i in range(500):
            sink(_event(t * 1000 + i))

    threads = [threading.Thread(target=emit, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sink.close()
    packs = [json.loads(line)["pack"] for line in stream.getvalue().splitlines()]
    assert sorted(packs) == sorted(f"t.p{t * 1000 + i}" for t in range(4) for i in range(500))
    for t in range(4):  # each thread's lines in the order it emitted them
        mine = [p for p in packs if p.startswith(f"t.p{t}") and len(p) == len(f"t.p{t}000")]
        assert mine == [f"t.p{t * 1000 + i}" for i in range(len(mine))]


def test_an_event_line_longer_than_a_pipe_write_is_cut_to_fit() -> None:
    """16 correlation ids of 256 characters (the caller's choice) make a ~5 KB line, which
    would interleave with other workers' lines on a shared stderr pipe: the stream sink cuts
    the correlation values (then the message) until the line is one atomic write."""
    correlation = {f"id{i:02d}": f"{i:02d}" + "v" * 300 for i in range(16)}
    event = ErrorEvent.rejection(
        "overloaded", pack="t.big", message="m " + "é" * 900, correlation=correlation
    )
    assert len(event.to_json()) > PIPE_BUF  # the premise
    stream = Recorder()
    sink = StreamSink(stream, delay=0.05)
    for _ in range(3):
        sink(event)
    sink(_event(1))
    sink.close()
    assert stream.writes and all(len(w.encode()) <= PIPE_BUF for w in stream.writes)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 4
    for line in lines[:3]:
        assert set(line) == set(json.loads(event.to_json()))  # every key kept
        assert sorted(line["correlation"]) == sorted(correlation)  # every id kept
        assert all(v.endswith("...") for v in line["correlation"].values())
        assert all(v[:2] == k[2:] for k, v in line["correlation"].items())  # each its own
    assert lines[3]["pack"] == "t.p1"  # short lines untouched
    short = _event(1)
    assert fitted_line(short) == short.to_json() + b"\n"
