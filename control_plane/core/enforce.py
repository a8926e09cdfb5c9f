"""Enforcement: map a classification onto the pack's closed vocabulary, then redact.

The mapping is a table walk, deterministic and documented:

1. the code is declared by the pack -> that code;
2. a declared pack code ``absorbs`` it -> that pack code;
3. the code's documented ``fallback`` (``schemas/vocabulary.json``), tried the same way;
4. otherwise ``internal_error``.

An undeclared *pack-specific* code (not baseline, not in the vocabulary) is a contract
violation: it becomes ``internal_error``, is recorded as an incident and counted per pack.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from control_plane.core.classify import DEFAULT_RETRY_AFTER, Classification
from control_plane.core.outcome import CheckRecord, ErrorEnvelope, Violation
from control_plane.core.pack import Check
from control_plane.core.redact import (
    INTERNAL_DETAIL,
    INTERNAL_MESSAGE,
    Incidents,
    scrub,
    scrub_data,
)
from control_plane.core.registry import LoadedPack
from control_plane.core.vocabulary import ARTIFACT_FAILED, BASELINE, INTERNAL_ERROR

__all__ = ["MAX_MESSAGE", "Enforcer", "nearest_code", "scrubbed_check", "scrubbed_record"]

logger = logging.getLogger("capability_packs.enforce")

#: Longest ``message`` a caller receives; longer ones are cut (after scrubbing).
MAX_MESSAGE = 1000


def _message(text: object) -> str:
    """A caller-facing message: scrubbed first, then cut to :data:`MAX_MESSAGE`."""
    clean = scrub(text if isinstance(text, str) else str(text))
    return clean if len(clean) <= MAX_MESSAGE else clean[:MAX_MESSAGE] + "..."


def _retry_after(value: object) -> float:
    """A usable ``retry_after``: finite and >= 0, else the documented default."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return DEFAULT_RETRY_AFTER


def _violation(item: object) -> Violation:
    if isinstance(item, Mapping):
        where, why = item.get("field", ""), item.get("description", "")
    else:
        where, why = getattr(item, "field", ""), getattr(item, "description", str(item))
    return Violation.construct_trusted(field=_message(where), description=_message(why))


def scrubbed_check(check: Check) -> CheckRecord:
    """A finding as it leaves the control plane: every string in it scrubbed, JSON-safe."""
    return CheckRecord.construct_trusted(
        id=check.id,
        severity=check.severity,
        message=scrub(check.message),
        expected=scrub_data(check.expected),
        actual=scrub_data(check.actual),
        location=None if check.location is None else scrub(check.location),
    )


def scrubbed_record(item: Mapping[str, Any]) -> CheckRecord:
    """:func:`scrubbed_check` of ``Check`` built from one schema-checked ``validation``
    item (as ``validation.checks_from_data`` builds it), without the intermediate Check."""
    location = item.get("location")
    return CheckRecord.construct_trusted(
        id=str(item["id"]),
        severity=item["severity"],
        message=scrub(str(item["message"])),
        expected=scrub_data(item.get("expected")),
        actual=scrub_data(item.get("actual")),
        location=None if location is None else scrub(location),
    )


def nearest_code(loaded: LoadedPack, code: str) -> str:
    """The code a caller of ``loaded`` sees for ``code`` (see module docs)."""
    seen: set[str] = set()
    current: str | None = code
    while current is not None and current not in seen:
        seen.add(current)
        if current in loaded.vocabulary:
            return current
        absorbing = loaded.absorbed_by.get(current)
        if absorbing is not None:
            return absorbing
        info = BASELINE.get(current)
        current = info.fallback if info is not None else None
    return INTERNAL_ERROR


class Enforcer:
    """Builds error envelopes that stay inside each pack's vocabulary."""

    def __init__(self, incidents: Incidents) -> None:
        self.incidents = incidents
        #: pack name -> count of undeclared pack-specific codes seen.
        self.contract_violations: Counter[str] = Counter()

    def error(
        self,
        loaded: LoadedPack,
        classification: Classification | None,
        exc: BaseException | None,
        *,
        request_id: str,
        origin: str,
    ) -> ErrorEnvelope:
        """The envelope for a failure, given what classification found (or None)."""
        if classification is None:
            return self.internal(loaded, exc, request_id, "unclassified", "unclassified failure")
        code = classification.code
        if not isinstance(code, str) or (code not in BASELINE and code not in loaded.vocabulary):
            return self.contract_violation(
                loaded,
                exc,
                request_id,
                f"pack raised undeclared code {code!r}: {classification.message}",
            )
        final = nearest_code(loaded, code)
        if final == INTERNAL_ERROR:
            summary = f"{code} is not declared and nothing absorbs it: {classification.message}"
            return self.internal(loaded, exc, request_id, "unmapped", summary)
        info = loaded.vocabulary[final]
        fields: dict[str, Any] = {
            "code": final,
            "message": _message(classification.message),
            "retryable": info.retryable,
            "origin": origin,
            "recovery_hint": info.recovery_hint,
        }
        if final == "rate_limited":
            fields["retry_after"] = _retry_after(classification.retry_after)
        elif final == "schema_mismatch":
            fields["partial"] = True
            partial = classification.partial_result
            fields["partial_result"] = scrub_data(partial) if isinstance(partial, Mapping) else {}
            if classification.violations:
                fields["violations"] = [_violation(v) for v in classification.violations]
        elif final == ARTIFACT_FAILED:
            fields["checks"] = []
        return ErrorEnvelope.construct_trusted(**fields)

    def contract_violation(
        self, loaded: LoadedPack, exc: BaseException | None, request_id: str, summary: str
    ) -> ErrorEnvelope:
        """The pack broke its own contract: counted per pack, logged, ``internal_error``."""
        self.contract_violations[loaded.name] += 1
        logger.warning("contract violation: pack %s: %s", loaded.name, scrub(summary))
        return self.internal(loaded, exc, request_id, "contract_violation", summary)

    def internal(
        self,
        loaded: LoadedPack,
        exc: BaseException | None,
        request_id: str,
        kind: str,
        summary: str,
    ) -> ErrorEnvelope:
        """``internal_error``: fixed text, the full story kept under a reference id."""
        ref = self.incidents.record(
            exc, pack=loaded.name, request_id=request_id, kind=kind, summary=summary
        )
        info = BASELINE[INTERNAL_ERROR]
        return ErrorEnvelope.construct_trusted(
            code=INTERNAL_ERROR,
            message=INTERNAL_MESSAGE,
            retryable=info.retryable,
            origin="control_plane",
            detail=INTERNAL_DETAIL,
            reference_id=ref,
            recovery_hint=info.recovery_hint,
        )

    @staticmethod
    def artifact_failed(
        loaded: LoadedPack, failing: Sequence[Check | CheckRecord], fail_on: str
    ) -> ErrorEnvelope:
        """Strict mode's bridge from findings to the typed error.

        ``failing`` may hold records already scrubbed (``scrubbed_check``,
        ``scrubbed_record``), e.g. the validation record's own: they are reused as they are.
        """
        info = loaded.vocabulary[ARTIFACT_FAILED]
        ids = ", ".join(c.id for c in failing)
        return ErrorEnvelope.construct_trusted(
            code=ARTIFACT_FAILED,
            message=_message(f"{len(failing)} check(s) at or above {fail_on}: {ids}"),
            retryable=info.retryable,
            origin="control_plane",
            checks=[c if isinstance(c, CheckRecord) else scrubbed_check(c) for c in failing],
            recovery_hint=info.recovery_hint,
        )
