"""What one connection may make the server hold: grpc core's HTTP/2 and connection bounds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AGE_GRACE",
    "MAX_AGE",
    "MAX_CONNECTIONS",
    "MAX_IDLE",
    "MAX_STREAMS",
    "ConnectionLimits",
    "grpc_server_options",
]

#: Calls open at once on one connection.
MAX_STREAMS = 100
#: Connections at once.
MAX_CONNECTIONS = 1000
#: Seconds without a call before a connection is closed.
MAX_IDLE = 900.0
#: Seconds after which a connection is told to go away (callers reconnect transparently).
MAX_AGE = 3600.0
#: Seconds a connection past its age keeps for the calls it carries, then it is closed:
#: a call's longest deadline (git's 3,600 s) fits.
AGE_GRACE = 3600.0
#: Seconds between the server's pings of an idle peer, and how long it waits for the ack.
KEEPALIVE_TIME = 300.0
KEEPALIVE_TIMEOUT = 20.0


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The per-connection bounds (docs/reliability.md, "The resource model"); ``None`` turns
    one off."""

    max_streams: int = MAX_STREAMS
    max_connections: int | None = MAX_CONNECTIONS
    max_idle: float | None = MAX_IDLE
    max_age: float | None = MAX_AGE
    age_grace: float = AGE_GRACE
    keepalive_time: float = KEEPALIVE_TIME
    keepalive_timeout: float = KEEPALIVE_TIMEOUT

    def grpc_options(self) -> list[tuple[str, Any]]:
        """The grpc core channel arguments that enforce these bounds."""
        options: list[tuple[str, Any]] = [
            ("grpc.max_concurrent_streams", self.max_streams),
            # Off: grpc core's "overload protection" refused streams within the announced
            # limit as well (RST_STREAM REFUSED_STREAM), which grpc clients report as a bare
            # UNAVAILABLE: 3,800 of a 6,000-call burst on one channel. Without it, a client
            # queues calls past the limit on its own side, and the streams of one that
            # ignores the limit are refused: bounded either way.
            ("grpc.http.overload_protection", 0),
            ("grpc.keepalive_time_ms", _ms(self.keepalive_time)),
            ("grpc.keepalive_timeout_ms", _ms(self.keepalive_timeout)),
            # A peer may ping at most once a minute without calls in flight; two pings
            # too many and it gets GOAWAY (grpc core's enforcement).
            ("grpc.http2.min_ping_interval_without_data_ms", 60_000),
            ("grpc.http2.max_ping_strikes", 2),
        ]
        if self.max_connections is not None:
            options.append(("grpc.max_allowed_incoming_connections", self.max_connections))
        if self.max_idle is not None:
            options.append(("grpc.max_connection_idle_ms", _ms(self.max_idle)))
        if self.max_age is not None:
            options.append(("grpc.max_connection_age_ms", _ms(self.max_age)))
            options.append(("grpc.max_connection_age_grace_ms", _ms(self.age_grace)))
        # Everything the connections may carry is picked up; grpc core never cancels or
        # refuses a call of its own (a bare CANCELLED, no reason) before the server sees it.
        pending = self.max_streams * (self.max_connections or MAX_CONNECTIONS)
        options.append(("grpc.server.max_pending_requests", pending))
        options.append(("grpc.server.max_pending_requests_hard_limit", pending))
        return options


def _ms(seconds: float) -> int:
    return max(1, min(2**31 - 1, round(seconds * 1000)))


def grpc_server_options(
    base: Iterable[tuple[str, Any]],
    limits: ConnectionLimits,
    extra: Iterable[tuple[str, Any]] = (),
) -> list[tuple[str, Any]]:
    """``base``, then the connection bounds, then ``extra`` (the operator's own
    ``--grpc-option``), each key once: a later value replaces an earlier one."""
    merged: dict[str, Any] = {}
    for key, value in (*base, *limits.grpc_options(), *extra):
        merged[key] = value
    return list(merged.items())
