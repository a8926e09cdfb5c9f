""":class:`Rejection`: a request refused before any pack ran, built (and scrubbed) by
:meth:`Rejection.of`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from control_plane._kernel.redact import scrub
from control_plane._resources import load_schema_file

__all__ = [
    "MAX_REJECTION_TEXT",
    "REASONS",
    "ReasonInfo",
    "Rejection",
    "RejectionViolation",
]

#: Longest message or violation text a rejection carries (scrubbed before it is cut).
MAX_REJECTION_TEXT = 1000
#: Longest pack name or request id a rejection echoes back.
MAX_ECHO = 128
#: At most this many field violations travel; the rest are counted in the last one.
MAX_VIOLATIONS = 50


@dataclass(frozen=True, slots=True)
class ReasonInfo:
    """One reason of the rejection vocabulary."""

    reason: str
    title: str
    description: str
    retryable: bool
    recovery_hint: str
    grpc_status: str


def _load() -> Mapping[str, ReasonInfo]:
    data = load_schema_file("rejections.json")
    reasons = {
        entry["reason"]: ReasonInfo(
            reason=entry["reason"],
            title=entry["title"],
            description=entry["description"],
            retryable=bool(entry["retryable"]),
            recovery_hint=entry["recovery_hint"],
            grpc_status=entry["grpc_status"],
        )
        for entry in data["reasons"]
    }
    return MappingProxyType(reasons)


#: The closed set of rejection reasons, read from ``schemas/rejections.json``.
REASONS: Mapping[str, ReasonInfo] = _load()


def _text(value: object, limit: int = MAX_REJECTION_TEXT) -> str:
    """Scrubbed first, then cut (a cut secret would no longer match the scrubber)."""
    # exact str: no subclasses; only a window past the cut is scrubbed (bounded cost)
    return scrub(value if type(value) is str else str(value), limit)


@dataclass(frozen=True, slots=True)
class RejectionViolation:
    """One field of the request that was refused: a field name or JSON pointer and why."""

    field: str
    description: str


@dataclass(frozen=True, slots=True)
class Rejection:
    """A request refused before any pack ran. Build it with :meth:`of` (it scrubs)."""

    reason: str
    message: str
    retryable: bool
    recovery_hint: str
    grpc_status: str
    pack: str = ""
    request_id: str = ""
    violations: tuple[RejectionViolation, ...] = ()
    retry_after: float | None = None
    #: Extra ``ErrorInfo.metadata`` (e.g. an admission limit's ``scope`` and ``limit``).
    metadata: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(
        cls,
        reason: str,
        message: str,
        *,
        pack: str = "",
        request_id: str = "",
        violations: Iterable[Any] = (),
        retry_after: float | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> Rejection:
        """The one constructor: looks ``reason`` up, scrubs and bounds every string.

        ``violations`` are objects with ``field`` and ``description`` (or mappings with
        those keys). An unknown reason is a bug of the control plane: ``ValueError``.
        """
        info = REASONS.get(reason)
        if info is None:
            raise ValueError(f"{reason!r} is not a rejection reason ({', '.join(REASONS)})")
        items: list[RejectionViolation] = []
        listed = list(violations)
        for item in listed[:MAX_VIOLATIONS]:
            if isinstance(item, Mapping):
                where, why = item.get("field", ""), item.get("description", "")
            else:
                where, why = getattr(item, "field", ""), getattr(item, "description", item)
            items.append(RejectionViolation(_text(where, MAX_ECHO), _text(why)))
        if len(listed) > MAX_VIOLATIONS:
            more = len(listed) - MAX_VIOLATIONS
            items.append(RejectionViolation("", f"... and {more} more violation(s)"))
        delay: float | None = None
        if retry_after is not None and info.retryable:
            seconds = float(retry_after)
            delay = min(max(seconds, 0.0), 86400.0) if math.isfinite(seconds) else 1.0
        return cls(
            reason=reason,
            message=_text(message),
            retryable=info.retryable,
            recovery_hint=info.recovery_hint,
            grpc_status=info.grpc_status,
            pack=_text(pack, MAX_ECHO),
            request_id=_text(request_id, MAX_ECHO),
            violations=tuple(items),
            retry_after=delay,
            metadata=tuple(
                (_text(k, 64), _text(v, MAX_ECHO)) for k, v in list((metadata or {}).items())[:16]
            ),
        )

    @property
    def code(self) -> str:
        """What a caller branches on: the reason (``ErrorInfo.metadata["code"]``)."""
        return self.reason

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (unset fields dropped); :meth:`from_dict` is the inverse."""
        data: dict[str, Any] = {
            "reason": self.reason,
            "message": self.message,
            "retryable": self.retryable,
            "recovery_hint": self.recovery_hint,
        }
        if self.pack:
            data["pack"] = self.pack
        if self.request_id:
            data["request_id"] = self.request_id
        if self.violations:
            data["violations"] = [
                {"field": v.field, "description": v.description} for v in self.violations
            ]
        if self.retry_after is not None:
            data["retry_after"] = self.retry_after
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rejection:
        """A rejection received as data (from another process); unknown reasons are
        refused with ``ValueError``, strings are scrubbed again."""
        retry = data.get("retry_after")
        extra = data.get("metadata")
        metadata = (
            {str(k): str(v) for k, v in extra.items()} if isinstance(extra, Mapping) else None
        )
        return cls.of(
            str(data.get("reason", "")),
            str(data.get("message", "")),
            pack=str(data.get("pack", "")),
            request_id=str(data.get("request_id", "")),
            violations=[v for v in data.get("violations", ()) if isinstance(v, Mapping)],
            retry_after=float(retry) if isinstance(retry, int | float) else None,
            metadata=metadata,
        )
