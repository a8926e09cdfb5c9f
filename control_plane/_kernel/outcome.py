"""The immutable :class:`Outcome` of one invocation, scrubbed and bounded by its constructors."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from control_plane._kernel.bounds import MAX_CHECK_VALUE_NODES, MAX_PARTIAL_NODES, safe_text
from control_plane._kernel.pack import Check
from control_plane._kernel.redact import scrub, scrub_data
from control_plane._kernel.vocabulary import BASELINE, INTERNAL_ERROR

__all__ = [
    "INTERNAL_DETAIL",
    "INTERNAL_MESSAGE",
    "MAX_MESSAGE",
    "CheckRecord",
    "ErrorEnvelope",
    "Outcome",
    "ValidationRecord",
    "Violation",
    "bounded_text",
]

#: Longest ``message`` (and violation text) a caller receives; cut after scrubbing.
MAX_MESSAGE = 1000
#: The fixed text of every ``internal_error``: the original is kept server-side.
INTERNAL_MESSAGE = "The pack failed in a way that could not be classified."
INTERNAL_DETAIL = "redacted: the original error is kept server-side under reference_id"


def _is_generated_id(text: str) -> bool:
    """A request id the runtime made (``uuid4().hex``): nothing in it to scrub, and
    scrubbing every fresh one would only churn the scrubber's cache of clean texts."""
    return len(text) == 32 and type(text) is str and not text.strip("0123456789abcdef")


def _check_id(value: object) -> str:
    """A check id scrubbed and bounded, still an id (``^[a-z][a-z0-9_.-]*$`` as the
    validation schema requires): a redaction marker inside it becomes ``redacted``."""
    clean = bounded_text(value, 256)
    if "[REDACTED" in clean:
        clean = _MARKER.sub("redacted", clean)
    return clean


_MARKER = re.compile(r"\[REDACTED[^\]]*\]")


def bounded_text(text: object, limit: int = MAX_MESSAGE) -> str:
    """``text`` as a caller may see it: scrubbed first, then cut to ``limit`` characters
    (a secret cut in half would no longer match the scrubber)."""
    # Made encodable (lone surrogates) and never raising, whatever __str__ does; only a
    # window past the cut is scrubbed: the cost is bounded by ``limit`` (issue 16).
    if type(text) is not str or not text.isascii():
        text = safe_text(text)
    return scrub(text, limit)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    @classmethod
    def construct_trusted(cls, **values: Any) -> Self:
        """The record of field values the runtime built itself (its scrubbing constructors);
        ``values`` must be field names, and their sizes bounded (see below).

        pydantic's strict ``model_validate`` builds it in its compiled core, several times
        cheaper than ``model_construct``'s per-field alias and default lookups in Python
        (the hot path builds an envelope or a check record per failure and per finding);
        the values are ours, so it passes, and where it would not, ``model_construct``
        builds the same record unchecked, as before. Validation copies ``dict``/``list``
        fields (not what ``Any`` holds): a record with unbounded containers (an
        :class:`Outcome`'s ``result``) uses ``model_construct``.
        """
        return cls._from_trusted(values)

    @classmethod
    def _from_trusted(cls, values: dict[str, Any]) -> Self:
        """:meth:`construct_trusted` given the dict itself (no ``**`` repacking)."""
        try:
            return cls.model_validate(values)
        except ValidationError:
            return cls.model_construct(**values)


class CheckRecord(_Frozen):
    """One validation finding as it travels."""

    id: str
    severity: Literal["pass", "warn", "fail"]
    message: str
    expected: Any = None
    actual: Any = None
    location: str | None = None

    @classmethod
    def build(
        cls,
        id: object,
        severity: Literal["pass", "warn", "fail"],
        message: object,
        expected: Any = None,
        actual: Any = None,
        location: object = None,
    ) -> CheckRecord:
        """The one constructor: every string scrubbed (the id too), values JSON-safe."""
        return cls.construct_trusted(
            id=_check_id(id),
            severity=severity,
            message=bounded_text(message),
            expected=scrub_data(expected, max_nodes=MAX_CHECK_VALUE_NODES),
            actual=scrub_data(actual, max_nodes=MAX_CHECK_VALUE_NODES),
            location=None if location is None else bounded_text(location),
        )

    @classmethod
    def of(cls, check: Check) -> CheckRecord:
        """:meth:`build` from a pack's :class:`~control_plane._kernel.pack.Check`."""
        return cls.build(
            check.id, check.severity, check.message, check.expected, check.actual, check.location
        )


class ValidationRecord(_Frozen):
    """The ``validation`` field: worst severity and every check."""

    status: Literal["pass", "warn", "fail"]
    checks: list[CheckRecord]

    @classmethod
    def build(
        cls, status: Literal["pass", "warn", "fail"], checks: list[CheckRecord]
    ) -> ValidationRecord:
        """The one constructor: ``checks`` are records built by :meth:`CheckRecord.build`."""
        return cls.construct_trusted(status=status, checks=checks)


class Violation(_Frozen):
    """A field-level violation: JSON pointer and reason."""

    field: str
    description: str

    @classmethod
    def build(cls, item: object) -> Violation:
        """From anything with ``field``/``description`` (or a mapping with those keys)."""
        if isinstance(item, Mapping):
            where, why = item.get("field", ""), item.get("description", "")
        else:
            where, why = getattr(item, "field", ""), getattr(item, "description", item)
        return cls.construct_trusted(field=bounded_text(where), description=bounded_text(why))


class ErrorEnvelope(_Frozen):
    """What a caller receives on failure; ``code`` is inside the pack's vocabulary."""

    code: str
    message: str
    retryable: bool
    origin: str
    retry_after: float | None = None
    partial: Literal[True] | None = None
    partial_result: dict[str, Any] | None = None
    violations: list[Violation] | None = None
    detail: str | None = None
    reference_id: str | None = None
    checks: list[CheckRecord] | None = None
    recovery_hint: str | None = None

    @classmethod
    def build(
        cls,
        code: str,
        message: object,
        *,
        retryable: bool,
        origin: str,
        recovery_hint: str | None = None,
        retry_after: float | None = None,
        partial_result: Mapping[str, Any] | None = None,
        violations: Iterable[object] | None = None,
        checks: Iterable[CheckRecord] | None = None,
        detail: str | None = None,
        reference_id: str | None = None,
    ) -> ErrorEnvelope:
        """The one constructor of a caller-facing error: the message scrubbed and bounded,
        the partial result scrubbed JSON data, violations built by :meth:`Violation.build`.
        ``checks`` are records already built by :meth:`CheckRecord.build` (reused as they
        are: strict mode lists the validation's own records)."""
        fields: dict[str, Any] = {
            "code": str(code),  # an exact str, whatever subclass came in
            "message": bounded_text(message),
            "retryable": bool(retryable),
            "origin": bounded_text(origin, 128),
        }
        if recovery_hint is not None:
            fields["recovery_hint"] = recovery_hint
        if retry_after is not None:
            fields["retry_after"] = float(retry_after)
        if partial_result is not None:
            fields["partial"] = True
            fields["partial_result"] = scrub_data(partial_result, max_nodes=MAX_PARTIAL_NODES)
        if violations is not None:
            fields["violations"] = [Violation.build(v) for v in violations]
        if checks is not None:
            fields["checks"] = [
                c if isinstance(c, CheckRecord) else CheckRecord.of(c) for c in checks
            ]
        if detail is not None:
            fields["detail"] = bounded_text(detail)
        if reference_id is not None:
            fields["reference_id"] = reference_id
        return cls.construct_trusted(**fields)

    @classmethod
    def internal(
        cls, reference_id: str | None, *, origin: str = "control_plane", marker: str = ""
    ) -> ErrorEnvelope:
        """The one ``internal_error``: fixed text, the reference id of the incident that
        keeps the original (``None`` where no incident could be kept), and an optional
        ``marker`` saying which side of a boundary synthesized it."""
        info = BASELINE[INTERNAL_ERROR]
        return cls.construct_trusted(
            code=INTERNAL_ERROR,
            message=f"{INTERNAL_MESSAGE} {marker}" if marker else INTERNAL_MESSAGE,
            retryable=info.retryable,
            origin=origin,
            detail=INTERNAL_DETAIL if reference_id is not None else None,
            reference_id=reference_id,
            recovery_hint=info.recovery_hint,
        )


#: The most top-level keys of a ``result`` that :meth:`Outcome.build` lets validation copy.
_COPIED_RESULT_KEYS = 64


class Outcome(_Frozen):
    """One invocation's outcome: a result (with optional validation) or an error."""

    pack: str
    version: str
    request_id: str
    result: dict[str, Any] | None = None
    validation: ValidationRecord | None = None
    error: ErrorEnvelope | None = None

    @classmethod
    def build(
        cls,
        pack: str,
        version: str,
        request_id: str,
        *,
        result: dict[str, Any] | None = None,
        validation: ValidationRecord | None = None,
        error: ErrorEnvelope | None = None,
    ) -> Outcome:
        """The one constructor: ``validation`` and ``error`` built by their own scrubbing
        constructors; the request id (the caller's own text) scrubbed and bounded. The
        ``result`` is the pack's data and is not scrubbed (see docs/reliability.md). It is
        unbounded: validation would copy it (its top level) and a
        :class:`~control_plane._kernel.returned.LargeResult`
        must stay one, so only no result or a small plain dict takes
        :meth:`construct_trusted`'s faster path, any other ``model_construct``."""
        fields: dict[str, Any] = {
            "pack": bounded_text(pack, 256),
            "version": version,
            "request_id": request_id
            if _is_generated_id(request_id)
            else bounded_text(request_id, 256),
            "result": result,
            "validation": validation,
            "error": error,
        }
        if result is None or (type(result) is dict and len(result) <= _COPIED_RESULT_KEYS):
            return cls._from_trusted(fields)
        return cls.model_construct(**fields)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def code(self) -> str | None:
        return self.error.code if self.error is not None else None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, unset fields dropped."""
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """The strict inverse of :meth:`to_dict`; raises ``pydantic.ValidationError``."""
        return cls.model_validate(data)
