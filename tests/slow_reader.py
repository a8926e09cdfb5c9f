"""A raw HTTP/2 gRPC client that never reads: every stream's window is 0.

It opens one connection, announces ``SETTINGS_INITIAL_WINDOW_SIZE = 0`` (the server may
send no response DATA on any stream), sends calls without a deadline and keeps
answering PINGs, as a hostile caller pinning the server's memory would
(tests/test_resources.py). It records how each stream ended: reset by the server
(``RST_STREAM``), closed with trailers, or still open; and whether the connection was
closed (``GOAWAY`` or EOF).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

SERVICE = "/control_plane.v1.ControlPlaneService/"


def grpc_frame(message: bytes) -> bytes:
    """One gRPC length-prefixed message (uncompressed)."""
    return struct.pack(">BI", 0, len(message)) + message


@dataclass
class SlowReader:
    """One connection to ``host:port`` whose streams never open their window."""

    host: str
    port: int
    #: stream id -> "reset", "closed" or "open"
    streams: dict[int, str] = field(default_factory=dict)
    #: headers frames seen per stream (a response's headers arrive before its DATA)
    headers: dict[int, list[tuple[bytes, bytes]]] = field(default_factory=dict)
    goaway: bool = False
    eof: bool = False
    refused: int = 0
    #: Open streams past the server's MAX_CONCURRENT_STREAMS, as a hostile client would.
    ignore_limit: bool = False

    def __post_init__(self) -> None:
        self.sock = socket.create_connection((self.host, self.port), timeout=10)
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        self.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        self._lock = threading.Lock()
        self._flush()
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def call(self, method: str, message: bytes, timeout: str | None = None) -> int | None:
        """Send one unary call; its stream id (``None``: the server refused a new stream).
        ``timeout``: its ``grpc-timeout`` header (e.g. ``"2S"``), none by default."""
        with self._lock:
            if self.goaway or self.eof:
                return None
            if self.ignore_limit:  # h2 checks the server's limit; this caller does not
                self.conn.remote_settings._settings.pop(
                    h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS, None
                )
            try:
                stream = self.conn.get_next_available_stream_id()
                self.conn.send_headers(
                    stream,
                    [
                        (":method", "POST"),
                        (":scheme", "http"),
                        (":path", SERVICE + method),
                        (":authority", f"{self.host}:{self.port}"),
                        ("content-type", "application/grpc"),
                        ("te", "trailers"),
                        *([("grpc-timeout", timeout)] if timeout else []),
                    ],
                )
                self.conn.send_data(stream, grpc_frame(message), end_stream=True)
            except h2.exceptions.TooManyStreamsError:
                self.refused += 1
                return None
            self.streams[stream] = "open"
            self._flush()
            return stream

    def _read(self) -> None:
        self.sock.settimeout(0.5)
        while not self._stop.is_set():
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                self.eof = True
                return
            if not data:
                self.eof = True
                return
            with self._lock:
                try:
                    events = self.conn.receive_data(data)
                except h2.exceptions.ProtocolError:  # frames after the server's GOAWAY
                    self.goaway = True
                    continue
                for event in events:
                    self._on(event)
                try:
                    self._flush()  # PING acks, SETTINGS acks: never a WINDOW_UPDATE
                except OSError:
                    self.eof = True
                    return

    def _on(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.StreamReset):
            self.streams[event.stream_id] = "reset"
        elif isinstance(event, h2.events.StreamEnded):
            self.streams[event.stream_id] = "closed"
        elif isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
            self.headers.setdefault(event.stream_id, []).extend(event.headers)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = True

    def count(self, state: str) -> int:
        with self._lock:
            return sum(1 for s in self.streams.values() if s == state)

    def close(self) -> None:
        self._stop.set()
        try:
            self.sock.close()
        finally:
            self._reader.join(5)


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """The process's resident set (``VmRSS`` of /proc/PID/status), in KiB; ``VmHWM``: its
    peak since it started (what sampling ``VmRSS`` can miss)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def wait_for(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False
