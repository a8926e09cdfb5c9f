"""The scrubbing relay: child processes' output reaches our stderr scrubbed, in whole lines,
rate-bounded.
"""

from __future__ import annotations

import os
import re
import selectors
import sys
import threading
import time
from typing import TextIO

from control_plane._kernel.redact import scrub

__all__ = ["BURST", "MAX_LINE", "RATE", "StderrRelay", "relay"]

#: Longest line relayed (characters); longer ones are cut with a marker.
MAX_LINE = 16 * 1024
_CHUNK = 64 * 1024
#: Most characters scrubbed as one text (well under the scrubber's own 64 KiB cut).
_GROUP = 32 * 1024
#: Bytes a second one child's output may pass on (the rest is dropped, and counted).
RATE = 256 * 1024
#: Bytes one child may print at once before :data:`RATE` applies.
BURST = 4 * 1024 * 1024


class _Stream:
    """One child's pipe: its read end and the partial line read so far."""

    __slots__ = ("allowance", "buffer", "dropped", "dropping", "fd", "prefix", "stamp")

    def __init__(self, fd: int, label: str) -> None:
        self.fd = fd
        #: What every line it prints starts with: which process printed it.
        self.prefix = f"[{_printable(label)}] "
        self.buffer = bytearray()
        #: The current line was already cut: drop bytes up to its newline.
        self.dropping = False
        #: Bytes it may still pass on now (refilled at RATE up to BURST), and when counted.
        self.allowance = float(BURST)
        self.stamp = time.monotonic()
        #: Bytes dropped over the budget and not yet reported.
        self.dropped = 0

    def admit(self, size: int) -> bool:
        """Whether ``size`` more bytes fit the budget (taken from it when they do)."""
        now = time.monotonic()
        self.allowance = min(float(BURST), self.allowance + (now - self.stamp) * RATE)
        self.stamp = now
        if size > self.allowance:
            return False
        self.allowance -= size
        return True


#: Control characters (C0 but tab, DEL, C1): they would drive the operator's terminal
#: (colours, its title, cursor moves, an 8-bit CSI) or rewrite a line already printed.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _printable(text: str) -> str:
    """``text`` with each control character spelled out (``\\x1b``), never sent."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _dropped_line(count: int) -> bytes:
    return (
        f"[stderr relay: {count} bytes of this process's output dropped, over {RATE // 1024} KiB/s]"
    ).encode()


class StderrRelay:
    """Scrubs what child processes print and writes it to ``target`` (default: our stderr)."""

    def __init__(self, target: TextIO | None = None) -> None:
        self._target = target
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._thread: threading.Thread | None = None

    def pipe(self, label: str = "child process") -> int:
        """A new pipe's write end for a child's stdout/stderr (the caller closes its copy
        once the child holds it); the relay reads the other end until every writer closed.
        Each line relayed starts with ``[label]``: what a child prints never passes for the
        control plane's own lines (its JSON log records, its ``packctl:`` lines)."""
        read_end, write_end = os.pipe()
        os.set_inheritable(write_end, True)
        with self._lock:
            self._selector.register(read_end, selectors.EVENT_READ, _Stream(read_end, label))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="stderr-relay", daemon=True)
                self._thread.start()
        os.write(self._wake_w, b"x")
        return write_end

    def open_pipes(self) -> int:
        """How many pipes still have a writer (or unread bytes)."""
        with self._lock:
            return len(self._selector.get_map()) - 1

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every pipe to be read to its end (its last
        partial line relayed); whether they all were. At exit: the relay's thread is a
        daemon, and a child's last words must not die with it."""
        deadline = time.monotonic() + timeout
        while self.open_pipes() > 0:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def _run(self) -> None:
        while True:
            for key, _ in self._selector.select():
                stream = key.data
                if stream is None:
                    os.read(self._wake_r, 4096)  # a new pipe was registered
                    continue
                self._read(stream)

    def _read(self, stream: _Stream) -> None:
        try:
            data = os.read(stream.fd, _CHUNK)
        except OSError:
            data = b""
        if not data:  # every writer closed: the last partial line, then forget the pipe
            last = [bytes(stream.buffer)] if stream.buffer and not stream.dropping else []
            if stream.dropped:
                last.append(_dropped_line(stream.dropped))
            if last:
                self._emit(stream, last)
            with self._lock:
                self._selector.unregister(stream.fd)
            os.close(stream.fd)
            return
        if not stream.admit(len(data)):  # over its budget: dropped, with its partial line
            stream.dropped += len(data)
            stream.buffer.clear()
            stream.dropping = True
            return
        lines: list[bytes] = []
        if stream.dropped:  # back within its budget: say what was lost
            lines.append(_dropped_line(stream.dropped))
            stream.dropped = 0
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                break
            if stream.dropping:
                stream.dropping = False
            else:
                stream.buffer += data[start:newline]
                lines.append(bytes(stream.buffer))
            stream.buffer.clear()
            start = newline + 1
        if not stream.dropping:
            stream.buffer += data[start:]
            if len(stream.buffer) > 4 * MAX_LINE:  # no newline in sight: cut it here
                lines.append(bytes(stream.buffer))
                stream.buffer.clear()
                stream.dropping = True
        if lines:
            self._emit(stream, lines)

    def _emit(self, stream: _Stream, lines: list[bytes]) -> None:
        # Lines that arrived together are scrubbed together (up to _GROUP characters), so a
        # secret spanning lines (a private key printed whole) is recognised whole.
        out: list[str] = []
        group: list[str] = []
        size = 0
        for raw in lines:
            line = raw.decode("utf-8", "replace").rstrip("\r")
            if len(line) > MAX_LINE:  # scrubbed with a window past the cut, then cut ("...")
                line = scrub(line, MAX_LINE)
            if group and size + len(line) > _GROUP:
                out.append(self._lines(stream, group))
                group, size = [], 0
            group.append(line)
            size += len(line) + 1
        if group:
            out.append(self._lines(stream, group))
        target = self._target if self._target is not None else sys.stderr
        try:
            target.write("".join(out))
            target.flush()
        except (OSError, ValueError):  # our stderr is gone or closed: nothing to tell
            pass

    @staticmethod
    def _lines(stream: _Stream, group: list[str]) -> str:
        """``group`` scrubbed as one text, then each line printable and labelled."""
        scrubbed = scrub("\n".join(group)).split("\n")
        return "".join(f"{stream.prefix}{_printable(line)}\n" for line in scrubbed)


_RELAY: list[StderrRelay] = []
_RELAY_LOCK = threading.Lock()


def drain(timeout: float) -> bool:
    """:meth:`StderrRelay.drain` of the process's relay, if one was started."""
    with _RELAY_LOCK:
        started = list(_RELAY)
    return all(r.drain(timeout) for r in started)


def relay() -> StderrRelay:
    """The process's relay (one thread for every child), started on first use."""
    with _RELAY_LOCK:
        if not _RELAY:
            _RELAY.append(StderrRelay())
        return _RELAY[0]
