"""The log handler of ``packctl serve`` (``_runtime/log_queue.py``, issue 34): the thread that
logs only formats and appends; one writer thread writes whole lines, in order, and a
stream that stalls drops and counts lines, then says how many once it moves again."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest

from control_plane._features.grpc.server import JsonFormatter
from control_plane._runtime import log_queue
from control_plane._runtime.log_queue import QueuedStreamHandler, dropped_lines


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    log = logging.getLogger("capability_packs.test_log_queue")
    log.propagate = False
    log.setLevel(logging.INFO)
    yield log
    for handler in list(log.handlers):
        log.removeHandler(handler)


def _handler(stream: TextIO, **kwargs: int) -> QueuedStreamHandler:
    handler = QueuedStreamHandler(stream, **kwargs)
    handler.setFormatter(JsonFormatter())
    return handler


def test_the_thread_that_logs_never_writes_to_a_file(
    tmp_path: Path, logger: logging.Logger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regular file is always "ready" to ``poll``, yet a hung disk blocks its ``write``:
    the logging thread (on a server, the event loop) must leave every write to the writer
    thread. (Before: lines were written on the caller's thread whenever nothing waited.)"""
    writers: list[str] = []
    real_write = os.write

    def write(fd: int, data: bytes | memoryview) -> int:
        writers.append(threading.current_thread().name)
        return real_write(fd, data)

    monkeypatch.setattr(log_queue.os, "write", write)
    with open(tmp_path / "log", "w") as stream:
        handler = _handler(stream)
        logger.addHandler(handler)
        for i in range(50):
            logger.info("line %d", i)
        handler.flush()
    lines = (tmp_path / "log").read_text().splitlines()
    assert [json.loads(line)["msg"] for line in lines] == [f"line {i}" for i in range(50)]
    assert writers and set(writers) == {"log-writer"}, writers
    assert len(writers) < 50  # lines gathered into writes, not one write each


def test_lines_of_many_threads_are_whole_and_in_order(
    tmp_path: Path, logger: logging.Logger
) -> None:
    with open(tmp_path / "log", "w") as stream:
        handler = _handler(stream)
        logger.addHandler(handler)

        def burst(t: int) -> None:
            for i in range(300):
                logger.info("t%d %d %s", t, i, "x" * (i % 700))

        threads = [threading.Thread(target=burst, args=(t,)) for t in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        handler.flush()
    seen: dict[str, int] = {}
    lines = (tmp_path / "log").read_text().splitlines()
    assert len(lines) == 6 * 300
    for line in lines:
        tag, number, _ = json.loads(line)["msg"].split(" ", 2)  # whole: it parses
        assert int(number) == seen.get(tag, -1) + 1, line  # in order per thread
        seen[tag] = int(number)


def test_a_stream_nobody_drains_drops_counts_and_says_so_once_it_moves(
    logger: logging.Logger,
) -> None:
    """A stderr pipe nobody reads: logging goes on (each call returns), lines past the
    queue are dropped and counted, and once the pipe is read again the lines kept arrive
    whole and in order, followed by one line saying how many were dropped."""
    read_fd, write_fd = os.pipe()
    stream = os.fdopen(write_fd, "w")
    handler = _handler(stream, capacity=100)
    logger.addHandler(handler)
    before = dropped_lines()
    started = time.monotonic()
    for i in range(600):  # ~600 KB: the pipe takes ~64 KB, the queue 100 lines
        logger.info("n=%d %s", i, "y" * 1000)
    assert time.monotonic() - started < 10.0  # no call waited for the pipe
    dropped = dropped_lines() - before
    assert dropped > 300

    chunks: list[bytes] = []

    def drain() -> None:
        while data := os.read(read_fd, 65536):
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    handler.flush(timeout=10.0)
    logger.info("after")
    handler.flush(timeout=10.0)
    logger.removeHandler(handler)
    stream.close()
    reader.join(10.0)
    os.close(read_fd)
    lines = b"".join(chunks).decode().splitlines()
    numbers = [int(m.group(1)) for line in lines if (m := re.search(r'"n=(\d+) ', line))]
    assert numbers == sorted(numbers) and numbers[0] == 0
    assert len(numbers) + dropped == 600
    notices = [line for line in lines if "log line(s) dropped" in line]
    counted = [
        re.fullmatch(r"capability_packs: (\d+) log line\(s\) dropped: .*", n) for n in notices
    ]
    assert sum(int(m.group(1)) for m in counted if m) == dropped, notices
    assert json.loads(lines[-1])["msg"] == "after"
    for line in lines:
        if line not in notices:
            json.loads(line)  # whole


def test_a_stream_in_memory_is_written_at_once(logger: logging.Logger) -> None:
    """A ``StringIO`` (tests, an embedder capturing logs) has no descriptor to stall."""
    import io

    out = io.StringIO()
    logger.addHandler(_handler(out))
    logger.info("now")
    assert json.loads(out.getvalue())["msg"] == "now"


@pytest.mark.system
def test_a_forked_child_writes_its_lines(tmp_path: Path, logger: logging.Logger) -> None:
    """The writer thread does not survive ``fork``: the child starts its own."""
    with open(tmp_path / "log", "w") as stream:
        handler = _handler(stream)
        logger.addHandler(handler)
        logger.info("parent")
        handler.flush()
        pid = os.fork()
        if pid == 0:  # the child: log, flush, leave without running the parent's cleanup
            logger.info("child")
            handler.flush()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    messages = [json.loads(line)["msg"] for line in (tmp_path / "log").read_text().splitlines()]
    assert messages == ["parent", "child"]
