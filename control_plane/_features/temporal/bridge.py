"""Error envelopes across the Temporal boundary: outcome to ``ApplicationError``, any failure chain
back.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any

import orjson
import pydantic
from temporalio.api.common.v1 import Payload
from temporalio.common import RetryPolicy
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ApplicationErrorCategory,
    ChildWorkflowError,
    TimeoutError,
)

from control_plane._features.temporal.messages import RetrySettings
from control_plane._kernel.classify import iter_chain
from control_plane._kernel.errors import (
    CapabilityPackError,
    PackError,
    RequestRejected,
)
from control_plane._kernel.outcome import ErrorEnvelope, Outcome, bounded_text
from control_plane._kernel.rejection import Rejection
from control_plane._kernel.vocabulary import BASELINE, INTERNAL_ERROR, CodeInfo

__all__ = [
    "DATA_CONVERTER",
    "INLINE_MARKER",
    "INVALID_ENVELOPE_MARKER",
    "MAX_FAILURE_BYTES",
    "MAX_PAYLOAD_BYTES",
    "NO_ENVELOPE_MARKER",
    "OUTCOME_KEY",
    "REJECTION_KEY",
    "REJECTION_TYPES",
    "SYNTHESIZED_ORIGIN",
    "TRUNCATED_MARKER",
    "OrderedJSONPayloadConverter",
    "OrderedPayloadConverter",
    "backoff_delay",
    "domain_error_to_application_error",
    "envelope_for_domain_error",
    "error_category",
    "failure_code",
    "fit_failure",
    "is_synthesized",
    "non_retryable_error_types",
    "outcome_to_application_error",
    "recover_envelope",
    "recover_outcome",
    "recover_rejection",
    "rejection_to_application_error",
    "retry_policy",
    "synthesized_envelope",
]

#: Key of the packed outcome in ``ApplicationError.details[0]``.
OUTCOME_KEY = "capability_packs_outcome"
#: Key of a packed request rejection in ``ApplicationError.details[0]``.
REJECTION_KEY = "capability_packs_rejection"
#: ``ApplicationError.type`` of rejections; never retried.
REJECTION_TYPES: tuple[str, ...] = ("UnknownPack", "InvalidInput", "RequestRejected")
#: ``origin`` of envelopes made by this module rather than by an invoker.
SYNTHESIZED_ORIGIN = "temporal"
NO_ENVELOPE_MARKER = "[temporal: no error envelope in the failure chain]"
INVALID_ENVELOPE_MARKER = "[temporal: error envelope failed schema validation]"
INLINE_MARKER = "[temporal: domain error raised inline in workflow code]"
TRUNCATED_MARKER = "[temporal: failure details cut to fit the payload limit]"

#: Largest payload (JSON bytes) the bridge hands Temporal, a success or a failure's
#: details: Temporal's default payload limit (2 MiB) less room for metadata and the
#: failure's message.
MAX_PAYLOAD_BYTES = 2 * 1024 * 1024 - 64 * 1024
#: Largest failure details (JSON bytes): a failure travels with its causes (the workflow's
#: failure carries the activity's as its cause, a parent's the child's), each with its own
#: copy of the details, and the whole chain must fit in one payload limit.
MAX_FAILURE_BYTES = 256 * 1024
#: Bytes kept for the marker in ``detail`` when details are cut.
_MARKER_RESERVE = 2048

_MAX_CHAIN = 64


# -- retry policy ----------------------------------------------------------------------


def non_retryable_error_types(vocabulary: Mapping[str, CodeInfo] = BASELINE) -> list[str]:
    """``ApplicationError`` types never to retry: permanent codes and rejections.

    Pack-specific permanent codes need not be listed: their errors are raised with
    ``non_retryable=True``. The list is the second line for baseline codes.
    """
    return [code for code, info in vocabulary.items() if not info.retryable] + list(REJECTION_TYPES)


def retry_policy(
    settings: RetrySettings | None = None, vocabulary: Mapping[str, CodeInfo] = BASELINE
) -> RetryPolicy:
    """The activity retry policy: retries only retryable codes (and lost attempts)."""
    s = settings if settings is not None else RetrySettings()
    return RetryPolicy(
        initial_interval=timedelta(seconds=s.initial_interval),
        backoff_coefficient=s.backoff_coefficient,
        maximum_interval=timedelta(seconds=s.maximum_interval),
        maximum_attempts=s.maximum_attempts,
        non_retryable_error_types=non_retryable_error_types(vocabulary),
    )


def backoff_delay(policy: RetryPolicy | None, attempt: int) -> float:
    """Seconds Temporal would wait after failed ``attempt`` (1-based) under ``policy``."""
    if policy is None:
        policy = RetryPolicy()
    delay = policy.initial_interval.total_seconds() * policy.backoff_coefficient ** max(
        attempt - 1, 0
    )
    if policy.maximum_interval is not None:
        delay = min(delay, policy.maximum_interval.total_seconds())
    return delay


# -- worker side -----------------------------------------------------------------------


def outcome_to_application_error(
    outcome: Outcome, *, backoff: float | None = None, final: bool = False
) -> ApplicationError:
    """The ``ApplicationError`` for a failed outcome (``outcome.error`` must be set).

    ``backoff`` is what the retry policy would wait anyway; with ``retry_after`` set the
    next attempt waits the larger of the two (as
    :class:`control_plane._features.grpc.client.RetryPolicy`).
    ``final`` (a workflow's own failure) carries no next-retry delay. ``non_retryable`` is
    the code's own flag either way: a retryable code never claims to be permanent (Temporal
    retries a workflow only under a workflow retry policy, which ``temporal-call`` does not
    set; the flag tells the caller whether calling again may help).
    """
    if outcome.error is None:
        raise ValueError("outcome has no error")
    outcome = fit_failure(outcome)
    env = outcome.error
    assert env is not None
    delay: timedelta | None = None
    if env.retryable and env.retry_after is not None and not final:
        delay = timedelta(seconds=max(env.retry_after, backoff or 0.0))
    return ApplicationError(
        env.message,  # already scrubbed; Temporal shows the type (the code) before it
        {OUTCOME_KEY: outcome.to_dict()},
        type=env.code,
        non_retryable=not env.retryable,
        next_retry_delay=delay,
        category=error_category(env.code),
    )


def error_category(code: str) -> ApplicationErrorCategory:
    """Temporal's category for a failure with ``code``: a code of the pack's vocabulary
    (or the baseline's) is an answer the pack declared, ``BENIGN`` (Temporal logs it at
    DEBUG, without a traceback per attempt, and leaves it out of its failure metrics; the
    control plane's error events and metrics count it); ``internal_error`` is a fault
    (a traceback at WARNING, and an incident)."""
    if code == INTERNAL_ERROR:
        return ApplicationErrorCategory.UNSPECIFIED
    return ApplicationErrorCategory.BENIGN


def _json_size(value: Any) -> int:
    return len(orjson.dumps(value))


def fit_failure(outcome: Outcome, budget: int = MAX_FAILURE_BYTES) -> Outcome:
    """``outcome`` with its error details cut to ``budget`` JSON bytes, or as it is.

    Temporal cannot complete an attempt (or a workflow) whose failure chain is over its
    payload limit: the caller would get an unexplained ``internal_error``, or wait forever.
    What can grow without bound is cut -- ``partial_result`` keeps a prefix of its
    top-level keys, ``checks``, ``violations`` and the validation's checks a prefix, each
    part a fair share (smallest first, the unused share passed on) -- and ``detail`` starts
    with :data:`TRUNCATED_MARKER` and says what was kept (``partial_result: 12 of 1000
    keys``). Code, message, flags, ``partial``, ``retry_after`` and ``reference_id`` are
    kept, so the envelope stays schema-valid.
    """
    data = outcome.to_dict()
    original = _json_size(data)
    if original <= budget or "error" not in data:
        return outcome
    error: dict[str, Any] = data["error"]
    validation: dict[str, Any] | None = data.get("validation")
    # (label, container, key, items): items are (key or None, value) in order.
    parts: list[tuple[str, dict[str, Any], str, list[tuple[str | None, Any]]]] = []
    if isinstance(error.get("partial_result"), dict):
        items = [(k, v) for k, v in error["partial_result"].items()]
        parts.append(("partial_result", error, "partial_result", items))
    for key in ("checks", "violations"):
        if isinstance(error.get(key), list):
            parts.append((key, error, key, [(None, v) for v in error[key]]))
    if validation is not None and isinstance(validation.get("checks"), list):
        parts.append(
            ("validation.checks", validation, "checks", [(None, v) for v in validation["checks"]])
        )
    for _, container, key, items in parts:
        container[key] = {} if items and items[0][0] is not None else []
    remaining = budget - _json_size(data) - _MARKER_RESERVE
    sized = sorted(
        (
            (label, container, key, items, [_item_size(k, v) for k, v in items])
            for label, container, key, items in parts
        ),
        key=lambda part: sum(part[4]),
    )
    notes: list[str] = []
    for left, (label, container, key, items, sizes) in zip(
        range(len(sized), 0, -1), sized, strict=True
    ):
        share, used, kept = max(remaining, 0) // left, 0, 0
        while kept < len(items) and used + sizes[kept] <= share:
            used += sizes[kept]
            kept += 1
        remaining -= used
        if isinstance(container[key], dict):
            container[key] = {k: v for k, v in items[:kept]}
            notes.append(f"{label}: {kept} of {len(items)} keys")
        else:
            container[key] = [v for _, v in items[:kept]]
            notes.append(f"{label}: {kept} of {len(items)}")
    marker = f"{TRUNCATED_MARKER} kept {'; '.join(notes)} (of {original} bytes)"
    previous = error.get("detail")
    error["detail"] = bounded_text(f"{marker} | {previous}" if previous else marker)
    return Outcome.from_dict(data)


def _item_size(key: str | None, value: Any) -> int:
    """JSON bytes one list item (or object member) adds, its separator included."""
    if key is None:
        return _json_size(value) + 1
    return _json_size({key: value}) - 1


def failure_code(error: ApplicationError) -> str | None:
    """The code (or rejection reason) an ``ApplicationError`` of this bridge carries."""
    for item in error.details:
        if isinstance(item, Mapping):
            packed = item.get(OUTCOME_KEY)
            if isinstance(packed, Mapping) and isinstance(packed.get("error"), Mapping):
                code = packed["error"].get("code")
                return code if isinstance(code, str) else None
            rejection = item.get(REJECTION_KEY)
            if isinstance(rejection, Mapping):
                reason = rejection.get("reason")
                return reason if isinstance(reason, str) else None
    return None


def rejection_to_application_error(exc: RequestRejected) -> ApplicationError:
    """A request refused before any pack ran, rendered from its ``Rejection``.

    ``type`` is the exception's class (``UnknownPack``, ``InvalidInput``,
    ``RequestRejected``), the message starts with the reason, the details carry
    ``Rejection.to_dict()`` and the retryable flag follows the rejection vocabulary.
    """
    rejection = exc.rejection
    return ApplicationError(
        f"{rejection.reason}: {rejection.message}",
        {REJECTION_KEY: rejection.to_dict()},
        type=type(exc).__name__ if type(exc).__name__ in REJECTION_TYPES else "RequestRejected",
        non_retryable=not rejection.retryable,
        category=ApplicationErrorCategory.BENIGN,  # the caller's request, not a fault
    )


def envelope_for_domain_error(exc: CapabilityPackError) -> ErrorEnvelope:
    """The envelope of a domain error raised outside any invoker (inline workflow code).

    No pack vocabulary is at hand there, so only baseline codes keep their code (scrubbed
    message, payload kept); a pack-specific code, or any other error of ours, becomes a
    synthesized ``internal_error`` with :data:`INLINE_MARKER`.
    """
    carried = getattr(exc, "envelope", None)  # a client's PackCallError: already typed
    if isinstance(carried, ErrorEnvelope):
        return carried
    if isinstance(exc, PackError) and exc.code in BASELINE:
        info = BASELINE[exc.code]
        partial = exc.partial_result is not None and exc.code == "schema_mismatch"
        return ErrorEnvelope.build(
            exc.code,
            exc.message,
            retryable=info.retryable,
            origin="workflow",
            retry_after=exc.retry_after if exc.code == "rate_limited" else None,
            partial_result=exc.partial_result if partial else None,
            recovery_hint=info.recovery_hint or None,
        )
    return synthesized_envelope(INLINE_MARKER, type(exc).__name__)


def domain_error_to_application_error(
    exc: CapabilityPackError, *, pack: str = "", request_id: str = ""
) -> ApplicationError:
    """The fail-safe floor: a domain error in workflow code fails the workflow, typed."""
    if isinstance(exc, RequestRejected):
        return rejection_to_application_error(exc)
    outcome = Outcome.build(pack, "", request_id, error=envelope_for_domain_error(exc))
    # A workflow's own failure: no next-retry delay; non_retryable is the code's own flag.
    return outcome_to_application_error(outcome, final=True)


# -- caller side -----------------------------------------------------------------------


def synthesized_envelope(marker: str, chain: str = "") -> ErrorEnvelope:
    """``internal_error`` made on this side of the boundary; ``marker`` says why.

    ``detail`` names only the failure types in the chain (never their text).
    """
    internal = ErrorEnvelope.internal(None, origin=SYNTHESIZED_ORIGIN, marker=marker)
    if not chain:
        return internal
    return internal.model_copy(update={"detail": bounded_text(f"failure chain: {chain}")})


def is_synthesized(envelope: ErrorEnvelope) -> bool:
    """True for an envelope this module made up because none was found intact."""
    return envelope.origin == SYNTHESIZED_ORIGIN and envelope.code == INTERNAL_ERROR


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps, cycle-safe: the classifier's own chain walk."""
    return iter_chain(exc)


def _describe(exc: BaseException) -> str:
    name = type(exc).__name__
    if isinstance(exc, TimeoutError):
        return f"{name}({exc.type.name if exc.type is not None else '?'})"
    if isinstance(exc, ActivityError | ChildWorkflowError) and exc.retry_state is not None:
        return f"{name}({exc.retry_state.name})"
    if isinstance(exc, ApplicationError) and exc.type:
        return f"{name}({exc.type})"
    return name


def _packed(exc: BaseException, key: str) -> Any:
    if isinstance(exc, ApplicationError):
        for item in exc.details:
            if isinstance(item, Mapping) and key in item:
                return item[key]
    return None


def recover_outcome(exc: BaseException, *, pack: str = "", request_id: str = "") -> Outcome:
    """The failed :class:`Outcome` packed somewhere in ``exc``'s chain; total.

    Without one (or with one that breaks the schema) the outcome carries a synthesized
    ``internal_error``; ``pack`` and ``request_id`` then fill its identity.
    """
    chain = list(_chain(exc))
    for current in chain:
        packed = _packed(current, OUTCOME_KEY)
        if packed is None:
            continue
        try:
            outcome = Outcome.from_dict(dict(packed)) if isinstance(packed, Mapping) else None
        except pydantic.ValidationError:
            outcome = None
        if outcome is not None and outcome.error is not None:
            return outcome
        envelope = synthesized_envelope(INVALID_ENVELOPE_MARKER, _describe(current))
        return _failed(pack, request_id, envelope)
    description = " > ".join(_describe(e) for e in chain)
    return _failed(pack, request_id, synthesized_envelope(NO_ENVELOPE_MARKER, description))


def recover_envelope(exc: BaseException) -> ErrorEnvelope:
    """The typed error envelope in ``exc``'s chain; total (see :func:`recover_outcome`)."""
    envelope = recover_outcome(exc).error
    assert envelope is not None
    return envelope


def recover_rejection(exc: BaseException) -> RequestRejected | None:
    """The :class:`UnknownPack` / :class:`InvalidInput` packed in the chain, if any."""
    for current in _chain(exc):
        data = _packed(current, REJECTION_KEY)
        if not isinstance(data, Mapping):
            continue
        try:
            return RequestRejected.of(Rejection.from_dict(data))
        except ValueError:  # a reason outside the vocabulary: not one of ours
            continue
    return None


def _failed(pack: str, request_id: str, envelope: ErrorEnvelope) -> Outcome:
    return Outcome.build(pack, "", request_id, error=envelope)


# -- payloads --------------------------------------------------------------------------


class OrderedJSONPayloadConverter(JSONPlainPayloadConverter):
    """Temporal's ``json/plain`` converter without its ``sort_keys``: a result comes back
    with its keys in the order the pack returned them, as over gRPC and ``--local``."""

    def to_payload(self, value: Any) -> Payload:
        data = json.dumps(value, cls=self._encoder, separators=(",", ":"))
        return Payload(metadata={"encoding": self.encoding.encode()}, data=data.encode())


class OrderedPayloadConverter(CompositePayloadConverter):
    """Temporal's default payload converters, ``json/plain`` keeping the key order."""

    def __init__(self) -> None:
        super().__init__(
            *(
                OrderedJSONPayloadConverter()
                if isinstance(converter, JSONPlainPayloadConverter)
                else converter
                for converter in DefaultPayloadConverter.default_encoding_payload_converters
            )
        )


#: The data converter of the worker (it encodes results) and of the clients this package
#: connects (they encode inputs): Temporal's default, keys kept in order.
DATA_CONVERTER = dataclasses.replace(
    DataConverter.default, payload_converter_class=OrderedPayloadConverter
)
