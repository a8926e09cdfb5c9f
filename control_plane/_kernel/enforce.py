"""Enforcement: map a classification onto the pack's closed vocabulary (a documented table walk)."""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from control_plane._kernel.bounds import (
    clamp_retry_after,
    exact_str,
    json_safe,
    safe_text,
)
from control_plane._kernel.classify import DEFAULT_RETRY_AFTER, Classification
from control_plane._kernel.incidents import Incidents
from control_plane._kernel.outcome import CheckRecord, ErrorEnvelope, bounded_text
from control_plane._kernel.pack import Check
from control_plane._kernel.registry import LoadedPack
from control_plane._kernel.vocabulary import (
    ARTIFACT_FAILED,
    BASELINE,
    INTERNAL_ERROR,
    WELL_KNOWN_PACK_CODES,
)

__all__ = ["Enforcer", "nearest_code"]

logger = logging.getLogger("capability_packs.enforce")


def _partial(classification: Classification) -> Mapping[str, Any]:
    """The partial result of a ``schema_mismatch``, as data JSON and protobuf can carry
    (integers beyond 64 bits, lone surrogates...: see :func:`json_safe`); a checked copy
    of the pack's JSON output (rule ``output``) already is."""
    partial = classification.partial_result
    if not isinstance(partial, Mapping):
        return {}
    if classification.rule == "output":
        return partial
    safe = json_safe(partial)
    return safe if isinstance(safe, dict) else {}


def _retry_after(value: object) -> float:
    """A usable ``retry_after``: clamped to ``[0, MAX_RETRY_AFTER]`` (a day; ``+inf`` and
    integers beyond a float's range clamp too); NaN or not a number: the documented default."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:  # an int beyond a float's range
            seconds = math.inf if value > 0 else 0.0
        if not math.isnan(seconds):
            return clamp_retry_after(seconds)
    return DEFAULT_RETRY_AFTER


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
        if info is not None:
            current = info.fallback
        else:  # a well-known pack code's fallback (quota_exhausted -> auth_failed)
            fallback = WELL_KNOWN_PACK_CODES.get(current, {}).get("fallback")
            current = fallback if isinstance(fallback, str) else None
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
        # An exact str before any membership test: a str subclass may forge __eq__/__hash__.
        code = exact_str(classification.code)
        if code is None or (
            code not in BASELINE
            and code not in loaded.vocabulary
            and code not in WELL_KNOWN_PACK_CODES
        ):
            return self.contract_violation(
                loaded,
                exc,
                request_id,
                f"pack raised undeclared code {safe_text(classification.code, 200)!r}: "
                f"{safe_text(classification.message)}",
            )
        final = nearest_code(loaded, code)
        if final == INTERNAL_ERROR:
            if code == INTERNAL_ERROR:  # recognised, and no specific code is right
                summary = f"classified as internal_error ({classification.rule}): "
                return self.internal(
                    loaded, exc, request_id, "classified", summary + classification.message
                )
            summary = f"{code} is not declared and nothing absorbs it: {classification.message}"
            return self.internal(loaded, exc, request_id, "unmapped", summary)
        info = loaded.vocabulary[final]
        return ErrorEnvelope.build(
            final,
            classification.message,
            retryable=info.retryable,
            origin=origin,
            recovery_hint=info.recovery_hint,
            retry_after=_retry_after(classification.retry_after)
            if final == "rate_limited"
            else None,
            partial_result=_partial(classification) if final == "schema_mismatch" else None,
            violations=classification.violations or None if final == "schema_mismatch" else None,
            checks=[] if final == ARTIFACT_FAILED else None,
        )

    def contract_violation(
        self, loaded: LoadedPack, exc: BaseException | None, request_id: str, summary: str
    ) -> ErrorEnvelope:
        """The pack broke its own contract: counted per pack, logged, ``internal_error``."""
        self.contract_violations[loaded.name] += 1
        logger.warning("contract violation: pack %s: %s", loaded.name, bounded_text(summary))
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
        return ErrorEnvelope.internal(ref)

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
        return ErrorEnvelope.build(
            ARTIFACT_FAILED,
            f"{len(failing)} check(s) at or above {fail_on}: {ids}",
            retryable=info.retryable,
            origin="control_plane",
            checks=[c if isinstance(c, CheckRecord) else CheckRecord.of(c) for c in failing],
            recovery_hint=info.recovery_hint,
        )
