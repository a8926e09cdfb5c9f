"""The error event: one scrubbed, bounded record per failed call or refused request
(``schemas/error-event.schema.json``), with the caller's correlation ids. The kernel builds
it (``request_refused`` carries one for every refusal, whatever adapter took the request);
the event stream, metrics and incident store (``_features/observability/events``, ...) consume
it."""

from __future__ import annotations

import contextlib
import functools
import random
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import orjson

from control_plane._kernel.errors import RequestRejected
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.redact import scrub, scrub_data
from control_plane._kernel.rejection import Rejection

__all__ = [
    "CORRELATION_METADATA_KEYS",
    "CORRELATION_METADATA_PREFIX",
    "ErrorEvent",
    "EventKind",
    "clean_correlation",
    "correlation_from_metadata",
    "correlation_scope",
    "current_correlation",
    "one_line",
    "parse_rfc3339",
    "reset_correlation",
    "rfc3339",
    "set_correlation",
]

EventKind: TypeAlias = Literal["invocation_failed", "request_rejected"]

#: gRPC metadata keys ``x-correlation-<name>`` become correlation id ``<name>``.
CORRELATION_METADATA_PREFIX = "x-correlation-"
#: Metadata keys taken as correlation ids under their own name.
CORRELATION_METADATA_KEYS = ("traceparent", "x-request-id")

_MAX_CORRELATION_IDS = 16
_MAX_VALUE = 256
_MAX_MESSAGE = 2048
_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")

_EMPTY: Mapping[str, str] = MappingProxyType({})
_CORRELATION: ContextVar[Mapping[str, str]] = ContextVar(
    "capability_packs_correlation", default=_EMPTY
)


@functools.lru_cache(maxsize=2)
def _second(whole: int) -> str:
    """``"YYYY-MM-DDTHH:MM:SS"`` of the whole second ``whole``: events come in bursts, and
    formatting the date part once per second halves the cost of a timestamp."""
    return datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def rfc3339(epoch: float) -> str:
    """``epoch`` as an RFC 3339 UTC timestamp with milliseconds, e.g. ``...T08:22:01.123Z``.

    The same text as ``datetime.fromtimestamp(epoch, UTC).isoformat(timespec=
    "milliseconds")`` (microseconds rounded half-even, then cut to milliseconds).
    """
    if not 0 <= epoch < 253402300799:  # before 1970 or past 9999: the general path
        stamp = datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")
        return stamp.replace("+00:00", "Z")
    whole = int(epoch)
    micros = round((epoch - whole) * 1e6)
    if micros >= 1_000_000:
        whole += 1
        micros -= 1_000_000
    return f"{_second(whole)}.{micros // 1000:03d}Z"


def parse_rfc3339(stamp: str) -> float:
    """The epoch seconds of an RFC 3339 timestamp (as written by :func:`rfc3339`)."""
    return datetime.fromisoformat(stamp).timestamp()


def _new_event_id() -> str:
    # 64 random bits, as before, but from the (fork-safe, urandom-seeded) Mersenne Twister:
    # an event id names a row, it guards nothing, and a syscall per failed call is not free.
    return f"evt_{random.getrandbits(64):016x}"


# -- correlation ids -------------------------------------------------------------------


def clean_correlation(ids: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> dict[str, str]:
    """Correlation ids made safe to log: bounded, string-valued, secrets scrubbed.

    Keys must match ``[A-Za-z0-9_.-]{1,64}`` (others are dropped); values are cut to 256
    characters; at most 16 ids are kept.
    """
    pairs = ids.items() if isinstance(ids, Mapping) else ids
    out: dict[str, str] = {}
    for key, value in pairs:
        if len(out) >= _MAX_CORRELATION_IDS:
            break
        if not isinstance(key, str) or not _KEY.match(key) or value is None:
            continue
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        out[key] = scrub(text, _MAX_VALUE - 3)  # scrubbed, then cut (with "...")
    return out


def current_correlation() -> Mapping[str, str]:
    """The correlation ids set for the running request (empty when none)."""
    return _CORRELATION.get()


def set_correlation(ids: Mapping[str, Any]) -> Token[Mapping[str, str]]:
    """Set the running request's correlation ids; pass the token to ``reset_correlation``."""
    return _CORRELATION.set(MappingProxyType(clean_correlation(ids)))


def reset_correlation(token: Token[Mapping[str, str]]) -> None:
    """Undo :func:`set_correlation`."""
    _CORRELATION.reset(token)


@contextlib.contextmanager
def correlation_scope(ids: Mapping[str, Any]) -> Iterator[Mapping[str, str]]:
    """Within the block, every event emitted by this task carries ``ids``."""
    token = set_correlation(ids)
    try:
        yield _CORRELATION.get()
    finally:
        _CORRELATION.reset(token)


def correlation_from_metadata(
    metadata: Iterable[tuple[str, str | bytes]] | None,
) -> dict[str, str]:
    """Correlation ids from gRPC invocation metadata.

    ``x-correlation-<name>: value`` becomes ``<name>: value``; ``traceparent`` and
    ``x-request-id`` are kept under their own names. Binary (``-bin``) keys are ignored.
    """
    if not metadata:
        return {}
    pairs: list[tuple[str, str | bytes]] = []
    for raw_key, value in metadata:
        key = raw_key.lower()
        if key.endswith("-bin"):
            continue
        if key.startswith(CORRELATION_METADATA_PREFIX):
            name = key[len(CORRELATION_METADATA_PREFIX) :]
            if name:
                pairs.append((name, value))
        elif key in CORRELATION_METADATA_KEYS:
            pairs.append((key, value))
    return clean_correlation(pairs)


# -- the event ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """One failed invocation or refused request, as operators see it.

    Every string is scrubbed of secrets. ``to_dict`` matches
    ``schemas/error-event.schema.json``.
    """

    #: ``invocation_failed`` (a pack ran and its outcome is an error) or
    #: ``request_rejected`` (refused before any handler ran).
    event: EventKind
    #: The caller's code: inside the pack's vocabulary for ``invocation_failed``; the
    #: rejection reason (``unknown_pack``, ``invalid_input``, ``admission_refused``) else.
    code: str
    #: The pack called (for ``unknown_pack``: the name the caller asked for).
    pack: str
    #: The pack's version, or ``None`` when no such pack is loaded.
    version: str | None
    #: ``pack:<name>``, ``control_plane`` or ``transport``.
    origin: str
    retryable: bool
    #: Incident reference id (``internal_error``), else ``None``.
    reference_id: str | None
    request_id: str | None
    message: str
    #: RFC 3339 UTC, millisecond precision.
    timestamp: str
    correlation: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    #: Wall time of the call in milliseconds, when known.
    duration_ms: float | None = None
    event_id: str = field(default_factory=_new_event_id)
    #: True when every string was scrubbed as the event was built (``from_outcome``,
    #: ``rejection``): stores need not scrub it again. Not part of the JSON form.
    scrubbed: bool = field(default=False, compare=False, repr=False)
    #: ``to_json()``, once computed: the stream sink and the incident store both need it.
    _json: bytes | None = field(default=None, init=False, compare=False, repr=False)

    @classmethod
    def from_outcome(
        cls,
        outcome: Outcome,
        *,
        elapsed_s: float | None = None,
        correlation: Mapping[str, str] | None = None,
        at: float | None = None,
    ) -> ErrorEvent:
        """The event for a failed ``outcome``; raises ``ValueError`` for a success."""
        error = outcome.error
        if error is None:
            raise ValueError("a successful outcome has no error event")
        return cls(
            event="invocation_failed",
            code=error.code,
            pack=outcome.pack,
            version=outcome.version,
            origin=error.origin,
            retryable=error.retryable,
            reference_id=error.reference_id,
            request_id=outcome.request_id,
            message=error.message[:_MAX_MESSAGE],
            timestamp=rfc3339(at if at is not None else _now()),
            correlation=_frozen(correlation if correlation is not None else current_correlation()),
            duration_ms=None if elapsed_s is None else round(elapsed_s * 1000.0, 3),
            scrubbed=True,
        )

    @classmethod
    def rejection(
        cls,
        rejection: Rejection | RequestRejected | str,
        *,
        pack: str = "",
        message: str = "",
        version: str | None = None,
        request_id: str | None = None,
        correlation: Mapping[str, str] | None = None,
        at: float | None = None,
    ) -> ErrorEvent:
        """The event for a request refused before any pack ran (origin ``transport``).

        Rendered from the :class:`~control_plane._kernel.rejection.Rejection` (a reason string
        builds one through :meth:`Rejection.of`, with ``pack`` and ``message``; a reason
        outside the rejection vocabulary is a ``ValueError``).
        """
        if isinstance(rejection, RequestRejected):
            rejection = rejection.rejection
        elif isinstance(rejection, str):
            rejection = Rejection.of(rejection, message or rejection.replace("_", " "), pack=pack)
        rid = request_id if request_id is not None else rejection.request_id or None
        return cls(
            event="request_rejected",
            code=rejection.reason,
            pack=rejection.pack[:_MAX_VALUE],
            version=version,
            origin="transport",
            retryable=rejection.retryable,
            reference_id=None,
            request_id=None if rid is None else scrub(rid, _MAX_VALUE - 3),
            message=rejection.message[:_MAX_MESSAGE],
            timestamp=rfc3339(at if at is not None else _now()),
            correlation=_frozen(correlation if correlation is not None else current_correlation()),
            scrubbed=True,
        )

    @property
    def epoch(self) -> float:
        """``timestamp`` as epoch seconds."""
        return parse_rfc3339(self.timestamp)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (every key present; absent values are ``null``)."""
        return {
            "event": self.event,
            "timestamp": self.timestamp,
            "event_id": self.event_id,
            "code": self.code,
            "pack": self.pack,
            "version": self.version,
            "origin": self.origin,
            "retryable": self.retryable,
            "reference_id": self.reference_id,
            "request_id": self.request_id,
            "correlation": dict(self.correlation),
            "message": self.message,
            "duration_ms": self.duration_ms,
        }

    def to_json(self) -> bytes:
        """One JSON line, without the newline (encoded once per event: it is immutable)."""
        encoded = self._json
        if encoded is None:
            data = self.to_dict()
            # The event channel's one outgoing path: an event built elsewhere (the
            # constructor, ``from_dict``) is scrubbed here, whatever sink writes it.
            encoded = one_line(orjson.dumps(data if self.scrubbed else scrub_data(data)))
            object.__setattr__(self, "_json", encoded)
        return encoded

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ErrorEvent:
        """The inverse of :meth:`to_dict`."""
        return cls(
            event=data["event"],
            code=data["code"],
            pack=data["pack"],
            version=data.get("version"),
            origin=data["origin"],
            retryable=bool(data["retryable"]),
            reference_id=data.get("reference_id"),
            request_id=data.get("request_id"),
            message=data["message"],
            timestamp=data["timestamp"],
            correlation=_frozen(data.get("correlation") or {}),
            duration_ms=data.get("duration_ms"),
            event_id=data["event_id"],
        )


#: UTF-8 of the characters JSON leaves raw but line readers take for a line break (NEL,
#: LINE SEPARATOR, PARAGRAPH SEPARATOR), and their escapes.
_LINE_BREAKS = (
    (b"\xc2\x85", b"\\u0085"),
    (b"\xe2\x80\xa8", b"\\u2028"),
    (b"\xe2\x80\xa9", b"\\u2029"),
)


def one_line(encoded: bytes) -> bytes:
    """JSON text from ``orjson.dumps`` with every character a line reader could take for a
    line break escaped (JSON escapes the C0 controls; these it leaves raw): a caller's
    pack name cannot forge an event or log line. ASCII text is returned as it is."""
    if encoded.isascii():
        return encoded
    for raw, escaped in _LINE_BREAKS:
        encoded = encoded.replace(raw, escaped)
    return encoded


def _now() -> float:
    return time.time()


def _frozen(ids: Mapping[str, str]) -> Mapping[str, str]:
    if not ids:
        return _EMPTY
    if isinstance(ids, MappingProxyType):
        return ids
    return MappingProxyType(clean_correlation(ids))
