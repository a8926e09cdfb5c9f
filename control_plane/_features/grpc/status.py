"""Failures on the wire: the one table from code to gRPC status, and the rich status both ways."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import grpc
import orjson
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from pydantic import BaseModel

from control_plane._kernel.bounds import clamp_retry_after, json_safe, valid_text
from control_plane._kernel.errors import FieldViolation, RequestRejected
from control_plane._kernel.outcome import (
    CheckRecord,
    ErrorEnvelope,
    Outcome,
    ValidationRecord,
    Violation,
)
from control_plane._kernel.redact import scrub
from control_plane._kernel.rejection import REASONS, Rejection
from control_plane._kernel.vocabulary import (
    BASELINE,
    EVERY_PACK_CODES,
    INTERNAL_ERROR,
    pack_code_status,
)
from control_plane.v1 import control_plane_pb2 as pb

__all__ = [
    "DETAILS_KEY",
    "MAX_DETAILS_BYTES",
    "MAX_STATUS_MESSAGE_BYTES",
    "NO_RETRY_PUSHBACK",
    "PUSHBACK_KEY",
    "REJECTION_DOMAIN",
    "RETRYABLE_STATUSES",
    "STATUS_BY_CODE",
    "Encoded",
    "ParsedStatus",
    "check_from_proto",
    "check_to_proto",
    "encode_failure",
    "envelope_from_proto",
    "envelope_to_proto",
    "error_status",
    "grpc_status",
    "json_object",
    "parse_call",
    "parse_status",
    "pushback_for",
    "reason_for",
    "refusal",
    "rejection_from_status",
    "rejection_status",
    "retryable_for",
    "service_config",
    "status_for",
    "validation_from_proto",
    "validation_to_proto",
]

DETAILS_KEY = "grpc-status-details-bin"
#: gRPC's own retry hint (gRFC A6), read by every gRPC library's retry policy: the
#: milliseconds to wait before the next attempt, or a negative value for "do not retry".
PUSHBACK_KEY = "grpc-retry-pushback-ms"
#: ``grpc-retry-pushback-ms`` of a failure that must not be retried.
NO_RETRY_PUSHBACK = "-1"
#: ``ErrorInfo.domain`` of requests refused before any pack ran.
REJECTION_DOMAIN = "control_plane"
#: Longest request id echoed in a rejection's metadata.
MAX_REJECTION_ECHO = 128

# Statuses that belong to the transport or to the caller's own credentials; no pack code
# may use them, or a caller could not tell a pack failure from a call that never arrived.
_RESERVED = frozenset({grpc.StatusCode.OK, grpc.StatusCode.UNAUTHENTICATED})


def grpc_status(name: str) -> grpc.StatusCode:
    """The ``grpc.StatusCode`` named ``name`` (e.g. ``"PERMISSION_DENIED"``)."""
    try:
        status: grpc.StatusCode = grpc.StatusCode[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a gRPC status code name") from None
    if status in _RESERVED:
        raise ValueError(f"gRPC status {name} is reserved and cannot carry a pack error")
    return status


#: Baseline code (and every pack's well-known code, ``not_permitted``) -> gRPC status, read
#: from the vocabulary.
STATUS_BY_CODE: Mapping[str, grpc.StatusCode] = MappingProxyType(
    {code: grpc_status(info.grpc_status) for code, info in {**BASELINE, **EVERY_PACK_CODES}.items()}
)
_PACK_CODE_STATUS: Mapping[bool, grpc.StatusCode] = MappingProxyType(
    {flag: grpc_status(pack_code_status(flag)) for flag in (True, False)}
)


def status_for(code: str, retryable: bool) -> grpc.StatusCode:
    """The gRPC status of a failure with ``code`` (``retryable`` matters for pack codes)."""
    status = STATUS_BY_CODE.get(code)
    return status if status is not None else _PACK_CODE_STATUS[retryable]


def reason_for(code: str) -> str:
    """``ErrorInfo.reason`` for a code: the code in UPPER_SNAKE."""
    return code.upper()


# -- envelope <-> proto ----------------------------------------------------------------

_SEVERITY_TO_PB: Mapping[str, int] = MappingProxyType(
    {"pass": pb.SEVERITY_PASS, "warn": pb.SEVERITY_WARN, "fail": pb.SEVERITY_FAIL}
)
_SEVERITY_FROM_PB: Mapping[int, str] = MappingProxyType({v: k for k, v in _SEVERITY_TO_PB.items()})


def _json_default(value: Any) -> str:
    return scrub(str(value))


def _dump(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=_json_default)
    except (TypeError, ValueError, OverflowError, RecursionError):
        # Integers beyond 64 bits, lone surrogates, non-string keys, cycles: made encodable.
        return orjson.dumps(json_safe(value), default=_json_default)


def _load(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # a hostile or broken peer: keep the text, not a crash
        return raw.decode("utf-8", "replace")


def check_to_proto(check: CheckRecord) -> pb.Check:
    """One finding as a ``control_plane.v1.Check`` (expected/actual as JSON).

    Records are scrubbed when they are built (:meth:`CheckRecord.build`); this only renders.
    """
    msg = pb.Check(
        id=check.id,
        severity=_SEVERITY_TO_PB[check.severity],  # type: ignore[arg-type]
        message=check.message,
        location=check.location or "",
    )
    if check.expected is not None:
        msg.expected = _dump(check.expected)
    if check.actual is not None:
        msg.actual = _dump(check.actual)
    return msg


def check_from_proto(msg: pb.Check) -> CheckRecord:
    """The reverse of :func:`check_to_proto`."""
    return CheckRecord.model_construct(
        id=msg.id,
        severity=_SEVERITY_FROM_PB.get(msg.severity, "fail"),
        message=msg.message,
        expected=_load(msg.expected),
        actual=_load(msg.actual),
        location=msg.location or None,
    )


def validation_to_proto(validation: ValidationRecord) -> pb.Validation:
    """A ``validation`` record as ``control_plane.v1.Validation``."""
    return pb.Validation(
        status=_SEVERITY_TO_PB[validation.status],  # type: ignore[arg-type]
        checks=[check_to_proto(c) for c in validation.checks],
    )


def validation_from_proto(msg: pb.Validation) -> ValidationRecord:
    """The reverse of :func:`validation_to_proto`."""
    return ValidationRecord.model_construct(
        status=_SEVERITY_FROM_PB.get(msg.status, "pass"),
        checks=[check_from_proto(c) for c in msg.checks],
    )


def envelope_to_proto(outcome: Outcome) -> pb.PackError:
    """The failed ``outcome``'s envelope as ``control_plane.v1.PackError``."""
    env = outcome.error
    if env is None:
        raise ValueError("outcome has no error")
    msg = pb.PackError(
        code=env.code,
        message=env.message,
        retryable=env.retryable,
        origin=env.origin,
        partial=bool(env.partial),
        detail=env.detail or "",
        reference_id=env.reference_id or "",
        recovery_hint=env.recovery_hint or "",
        pack=outcome.pack,
        pack_version=outcome.version,
        request_id=outcome.request_id,
    )
    if env.retry_after is not None:
        msg.retry_after = env.retry_after
    if env.partial_result is not None:
        msg.partial_result = _dump(env.partial_result)
    if env.violations:
        msg.violations.extend(
            pb.FieldViolation(field=v.field, description=v.description) for v in env.violations
        )
    validation = outcome.validation
    # The failing checks of a strict call are the validation's own records: convert each
    # record once even when it appears in both lists.
    done: dict[int, pb.Check] = {}
    if validation is not None:
        target = msg.validation
        target.status = _SEVERITY_TO_PB[validation.status]  # type: ignore[assignment]
        for check in validation.checks:
            converted = done[id(check)] = check_to_proto(check)
            target.checks.append(converted)
    if env.checks is not None:
        for check in env.checks:
            converted = done.get(id(check)) or check_to_proto(check)
            msg.checks.append(converted)
    return msg


def json_object(raw: bytes) -> dict[str, Any] | None:
    """``raw`` as a JSON object, ``None`` when it is not one (not JSON, not UTF-8, a list):
    what a peer sends as an object is used only as one."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def retryable_for(code: str, retryable: bool) -> bool:
    """The retryable flag of ``code``: the vocabulary's for a baseline code (whatever the
    wire claimed), ``retryable`` (the peer's) for a pack-specific one."""
    base = BASELINE.get(code)
    return base.retryable if base is not None else retryable


def envelope_from_proto(msg: pb.PackError) -> ErrorEnvelope:
    """The error envelope carried by a ``PackError``, held to what the contract allows
    whatever the peer sent: a baseline code's retryable flag is the vocabulary's,
    ``retry_after`` is within ``[0, MAX_RETRY_AFTER]``, ``partial_result`` is an object."""
    fields: dict[str, Any] = {
        "code": msg.code,
        "message": msg.message,
        "retryable": retryable_for(msg.code, msg.retryable),
        "origin": msg.origin,
    }
    if msg.HasField("retry_after"):
        fields["retry_after"] = clamp_retry_after(msg.retry_after)
    if msg.partial:
        fields["partial"] = True
    if msg.partial_result:
        fields["partial_result"] = json_object(msg.partial_result) or {}
    elif msg.partial:
        fields["partial_result"] = {}
    if msg.violations:
        fields["violations"] = [
            Violation.model_construct(field=v.field, description=v.description)
            for v in msg.violations
        ]
    for name in ("detail", "reference_id", "recovery_hint"):
        if text := getattr(msg, name):
            fields[name] = text
    if msg.checks or msg.code == "artifact_failed":
        fields["checks"] = [check_from_proto(c) for c in msg.checks]
    return ErrorEnvelope.construct_trusted(**fields)


# -- the rich status: one shape for every failure sent ----------------------------------------
#
# Every failure -- a pack's outcome, a refusal, the last resort -- is one ``google.rpc.Status``
# built by :func:`_rich` (``ErrorInfo``, ``RetryInfo`` when there is a delay, then
# ``BadRequest`` or ``PackError``) and ended by :func:`_end` (fitted to the bounds, the
# pushback from the failure's own ``retryable`` and delay).

#: Largest serialized ``google.rpc.Status`` in ``grpc-status-details-bin`` (bytes). The
#: trailer travels base64-encoded (4/3 of this) beside ``grpc-message``; both stay well
#: inside gRPC's default 8 KiB metadata limit (past it the caller gets
#: ``RESOURCE_EXHAUSTED``, past 16 KiB no status at all).
MAX_DETAILS_BYTES = 3584
#: Longest status message (``grpc-message``) in UTF-8 bytes; percent-encoded it is at most
#: three times as long. The full message travels in ``PackError.message``.
MAX_STATUS_MESSAGE_BYTES = 512
#: What ``ErrorInfo`` (with truncation counts) and ``RetryInfo`` may take, at most.
_INFO_RESERVE = 1024
_PACK_ERROR_BUDGET = MAX_DETAILS_BYTES - _INFO_RESERVE
#: Longest ``ErrorInfo`` metadata value or domain (characters).
_MAX_INFO_VALUE = 256


def _type_url(message: Any) -> str:
    return "type.googleapis.com/" + str(message.DESCRIPTOR.full_name)


_ERROR_INFO_URL = _type_url(error_details_pb2.ErrorInfo)
_RETRY_INFO_URL = _type_url(error_details_pb2.RetryInfo)
_BAD_REQUEST_URL = _type_url(error_details_pb2.BadRequest)
_PACK_ERROR_URL = _type_url(pb.PackError)


def _status_message(text: str) -> str:
    if not text.isascii():  # ASCII is valid UTF-8 as it is
        text = valid_text(text)
    raw = text.encode("utf-8")
    if len(raw) <= MAX_STATUS_MESSAGE_BYTES:
        return text
    return raw[: MAX_STATUS_MESSAGE_BYTES - 3].decode("utf-8", "ignore") + "..."


def _split(seconds: float) -> tuple[int, int]:
    """A delay as ``Duration``'s whole seconds and nanoseconds, bounded (a ``Duration``
    overflows past ~1e10 s)."""
    seconds = clamp_retry_after(float(seconds))
    whole = int(seconds)
    return whole, round((seconds - whole) * 1e9)


def _rich(
    status: grpc.StatusCode,
    message: str,
    reason: str,
    domain: str,
    metadata: dict[str, str],
    retry_after: float | None,
    extra: tuple[str, bytes] | None = None,
) -> status_pb2.Status:
    """The ``google.rpc.Status`` of a failure: ``ErrorInfo{reason, domain, metadata}``
    (values cut to :data:`_MAX_INFO_VALUE`), ``RetryInfo`` when ``retry_after`` is set,
    then ``extra`` (type URL, serialized message: ``BadRequest`` or ``PackError``)."""
    if len(domain) > _MAX_INFO_VALUE or any(len(v) > _MAX_INFO_VALUE for v in metadata.values()):
        domain = domain[:_MAX_INFO_VALUE]
        metadata = {k: v[:_MAX_INFO_VALUE] for k, v in metadata.items()}
    info = error_details_pb2.ErrorInfo(reason=reason, domain=domain, metadata=metadata)
    details = [any_pb2.Any(type_url=_ERROR_INFO_URL, value=info.SerializeToString())]
    if retry_after is not None:
        whole, nanos = _split(retry_after)
        retry = error_details_pb2.RetryInfo(
            retry_delay=duration_pb2.Duration(seconds=whole, nanos=nanos)
        )
        details.append(any_pb2.Any(type_url=_RETRY_INFO_URL, value=retry.SerializeToString()))
    if extra is not None:
        details.append(any_pb2.Any(type_url=extra[0], value=extra[1]))
    return status_pb2.Status(
        code=status.value[0], message=_status_message(message), details=details
    )


def _flag(value: bool) -> str:
    return "true" if value else "false"


def error_status(outcome: Outcome) -> status_pb2.Status:
    """The ``google.rpc.Status`` for a failed outcome (docs/grpc.md), bounded.

    Data protobuf or JSON cannot carry (integers beyond 64 bits, lone surrogates,
    non-finite numbers) is made encodable; ``PackError`` is cut to fit
    :data:`MAX_DETAILS_BYTES` (see :func:`_fit`), ``ErrorInfo`` always kept.
    """
    if outcome.error is None:
        raise ValueError("outcome has no error")
    try:
        return _error_status(outcome)
    except (TypeError, ValueError, OverflowError, UnicodeError, RecursionError):
        return _error_status(_clean(outcome))


def _error_status(outcome: Outcome) -> status_pb2.Status:
    env = outcome.error
    assert env is not None
    pack_error = envelope_to_proto(outcome)
    cut: dict[str, str] = {}
    if pack_error.ByteSize() > _PACK_ERROR_BUDGET:
        _fit(pack_error, _PACK_ERROR_BUDGET, cut)
    # (Caching ErrorInfo's static part per (pack, code) was measured: no faster.)
    metadata = {
        "code": env.code,
        "request_id": outcome.request_id,
        "retryable": _flag(env.retryable),
        "pack_version": outcome.version,
    }
    if env.reference_id:
        metadata["reference_id"] = env.reference_id
    if cut:
        parts = {key.removesuffix("_keys").removesuffix("_bytes") for key in cut}
        metadata["truncated"] = ",".join(sorted(parts))
        metadata.update(cut)
    return _rich(
        status_for(env.code, env.retryable),
        f"{env.code}: {env.message}",
        reason_for(env.code),
        outcome.pack,
        metadata,
        env.retry_after,
        None if "pack_error" in cut else (_PACK_ERROR_URL, pack_error.SerializeToString()),
    )


def _clean(value: Any) -> Any:
    """``value`` (a record, its lists, its fields) with every string valid UTF-8: the slow
    path, when encoding failed (JSON values are made encodable by :func:`_dump`)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, BaseModel):
        return value.model_construct(**{k: _clean(v) for k, v in value.__dict__.items()})
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value


def rejection_status(
    rejected: Rejection | RequestRejected, request_id: str = ""
) -> status_pb2.Status:
    """The ``google.rpc.Status`` for a request refused before any pack ran.

    Rendered from the :class:`~control_plane._kernel.rejection.Rejection` alone: the status
    from the rejection vocabulary, ``ErrorInfo{reason: REASON, domain: "control_plane",
    metadata: {code, retryable, pack, request_id}}``, ``RetryInfo`` when the caller may
    retry after a delay, ``BadRequest`` with the field violations.
    """
    rejection = rejected.rejection if isinstance(rejected, RequestRejected) else rejected
    rid = rejection.request_id or request_id
    metadata = dict(rejection.metadata)
    metadata["code"] = rejection.reason
    metadata["retryable"] = _flag(rejection.retryable)
    if rejection.pack:
        metadata["pack"] = rejection.pack
    if rid:
        metadata["request_id"] = scrub(rid, MAX_REJECTION_ECHO)  # the caller's text, echoed
    bad = None
    if rejection.violations:  # scrubbed by Rejection.of
        violations = [
            error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
            for v in rejection.violations
        ]
        bad = (
            _BAD_REQUEST_URL,
            error_details_pb2.BadRequest(field_violations=violations).SerializeToString(),
        )
    return _rich(
        grpc.StatusCode[rejection.grpc_status],
        rejection.message,
        reason_for(rejection.reason),
        REJECTION_DOMAIN,
        metadata,
        rejection.retry_after,
        bad,
    )


def _last_resort_status(pack: str, request_id: str, reference_id: str) -> status_pb2.Status:
    metadata = {
        "code": INTERNAL_ERROR,
        "retryable": "false",
        "request_id": valid_text(request_id),
        "encoding": "last_resort",
    }
    if reference_id:
        metadata["reference_id"] = valid_text(reference_id)
    return _rich(
        STATUS_BY_CODE[INTERNAL_ERROR],
        f"internal_error: {BASELINE[INTERNAL_ERROR].title}",
        reason_for(INTERNAL_ERROR),
        valid_text(pack)[:_MAX_INFO_VALUE] or REJECTION_DOMAIN,
        metadata,
        None,
    )


def rejection_from_status(parsed: ParsedStatus) -> Rejection | None:
    """The rejection a refused call carried (``None`` when it is not one of ours)."""
    info = parsed.error_info
    if info is None or info.domain != REJECTION_DOMAIN:
        return None
    reason = info.metadata.get("code") or info.reason.lower()
    if reason not in REASONS:
        return None
    known = {"code", "retryable", "pack", "request_id"}
    return Rejection.of(
        reason,
        parsed.message,
        pack=info.metadata.get("pack", ""),
        request_id=info.metadata.get("request_id", ""),
        violations=parsed.field_violations,
        retry_after=parsed.retry_delay,
        metadata={k: v for k, v in info.metadata.items() if k not in known},
    )


# -- the ending: fitted, with the pushback ----------------------------------------------------


class _Status(grpc.Status):
    """A ``grpc.Status`` for ``context.abort_with_status``."""

    __slots__ = ("code", "details", "trailing_metadata")

    def __init__(
        self, code: grpc.StatusCode, details: str, trailing: tuple[tuple[str, Any], ...]
    ) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = trailing


def pushback_for(retryable: bool, retry_after: float | None) -> str:
    """``grpc-retry-pushback-ms`` of a failure: its delay (``RetryInfo``'s, bounded the
    same way) in milliseconds when it is retryable and says how long to wait; ``"-1"`` (do
    not retry) when it is not retryable; ``""`` (no header: the client's own backoff)
    otherwise."""
    if not retryable:
        return NO_RETRY_PUSHBACK
    if retry_after is None:
        return ""
    return str(math.ceil(round(clamp_retry_after(retry_after) * 1e9) / 1e6))


def _end(rich: status_pb2.Status, retryable: bool, retry_after: float | None) -> grpc.Status:
    """``rich`` as the ``grpc.Status`` to end a call with: the details fitted to
    :data:`MAX_DETAILS_BYTES` (:func:`_fit_status`), encoded by
    ``grpc_status.rpc_status.to_status``, ``grpc-retry-pushback-ms`` beside them."""
    if rich.ByteSize() > MAX_DETAILS_BYTES:
        _fit_status(rich)
    encoded = rpc_status.to_status(rich)
    pushback = pushback_for(retryable, retry_after)
    if not pushback:
        return encoded
    trailing = (*encoded.trailing_metadata, (PUSHBACK_KEY, pushback))
    return _Status(encoded.code, encoded.details, trailing)


@dataclass(frozen=True, slots=True)
class Encoded:
    """A failed outcome as the caller receives it: the ``grpc.Status`` to end the call
    with, and whether the last-resort ``internal_error`` encoding had to be used (with
    the reference id it carries, if any)."""

    status: grpc.Status
    last_resort: bool = False
    reference_id: str = ""


def encode_failure(
    outcome: Outcome, *, reference: Callable[[BaseException], str] | None = None
) -> Encoded:
    """The ``grpc.Status`` of a failed outcome; never raises.

    :func:`error_status` already makes any outcome encodable and bounded; should it still
    fail (a bug), the caller gets ``internal_error`` built from constants, with a reference
    id from ``reference(exc)`` (which records the incident) when one is given, else the
    fixed :data:`LAST_RESORT` status.
    """
    try:
        env = outcome.error
        assert env is not None, "outcome has no error"
        return Encoded(_end(error_status(outcome), env.retryable, env.retry_after))
    # The last line of the closed set: whatever went wrong, the caller gets a code.
    except Exception as exc:  # noqa: BLE001
        try:
            ref = reference(exc) if reference is not None else ""
            rich = _last_resort_status(outcome.pack, outcome.request_id, ref)
            return Encoded(_end(rich, False, None), last_resort=True, reference_id=ref)
        # Even the constants failed (pack name or request id unencodable): fixed bytes.
        except Exception:  # noqa: BLE001
            return Encoded(LAST_RESORT, last_resort=True)


def refusal(rejected: Rejection | RequestRejected, request_id: str = "") -> grpc.Status:
    """The ``grpc.Status`` that ends a refused call (:func:`rejection_status`, fitted,
    with its pushback): what every refusal of the server aborts with."""
    rejection = rejected.rejection if isinstance(rejected, RequestRejected) else rejected
    return _end(rejection_status(rejection, request_id), rejection.retryable, rejection.retry_after)


#: The statuses of retryable failures (pack codes and refusals); no permanent failure
#: ends with one of them unless it also says ``grpc-retry-pushback-ms: -1``.
RETRYABLE_STATUSES: tuple[grpc.StatusCode, ...] = tuple(
    dict.fromkeys(
        [status_for(code, True) for code, info in BASELINE.items() if info.retryable]
        + [_PACK_CODE_STATUS[True]]
        + [grpc.StatusCode[info.grpc_status] for info in REASONS.values() if info.retryable]
    )
)


def service_config(
    service: str = "control_plane.v1.ControlPlaneService",
    *,
    max_attempts: int = 5,
    initial_backoff: float = 0.1,
    max_backoff: float = 10.0,
    backoff_multiplier: float = 2.0,
) -> dict[str, Any]:
    """A gRPC service config whose retry policy retries ``InvokePack`` on exactly the
    statuses of retryable failures (docs/grpc.md). Permanent failures that share one of
    them carry ``grpc-retry-pushback-ms: -1``, which every gRPC retry implementation reads
    as "do not retry"; retryable ones with a ``retry_after`` carry it as the pushback."""
    return {
        "methodConfig": [
            {
                "name": [{"service": service, "method": "InvokePack"}],
                "retryPolicy": {
                    "maxAttempts": max_attempts,
                    "initialBackoff": f"{initial_backoff:g}s",
                    "maxBackoff": f"{max_backoff:g}s",
                    "backoffMultiplier": backoff_multiplier,
                    "retryableStatusCodes": [s.name for s in RETRYABLE_STATUSES],
                },
            }
        ]
    }


# -- bounds: the details always fit gRPC's metadata limits --------------------------------


def _field_size(size: int) -> int:
    """Bytes a length-delimited field of ``size`` bytes takes (tag of up to 2 bytes)."""
    return 2 + max(1, (size.bit_length() + 6) // 7) + size


def _prefix(items: Any, allowance: int) -> tuple[int, int]:
    """How many of ``items`` (messages of a repeated field), from the first, fit in
    ``allowance`` bytes, and the bytes they take."""
    used = kept = 0
    for item in items:
        size = _field_size(item.ByteSize())
        if used + size > allowance:
            break
        used += size
        kept += 1
    return kept, used


def _fit(msg: pb.PackError, budget: int, cut: dict[str, str]) -> None:
    """Cut ``msg`` to at most ``budget`` serialized bytes, saying what was cut in ``cut``
    (``ErrorInfo.metadata``): violations, checks and the validation's checks keep a prefix
    (``violations: "kept/total"``...), ``partial_result`` keeps the top-level keys that fit
    (``partial_result_keys``, ``partial_result_bytes``), every part getting a fair share.
    Texts of the envelope itself are cut first when they alone take half the budget; if
    it still cannot fit it is dropped (``pack_error: "dropped"``) and ``ErrorInfo`` alone
    says what happened."""
    lists: dict[str, Any] = {
        "violations": msg.violations,
        "checks": msg.checks,
        "validation_checks": msg.validation.checks,
    }
    probe = pb.PackError()
    probe.CopyFrom(msg)
    del probe.violations[:]
    del probe.checks[:]
    del probe.validation.checks[:]
    probe.partial_result = b""
    if probe.ByteSize() > budget // 2:  # the envelope's own texts are huge: cut them first
        for name in ("message", "detail", "recovery_hint", "origin"):
            value = getattr(msg, name)
            if len(value) > 256:
                short = _status_message(value)[:256] + "..."
                setattr(msg, name, short)
                setattr(probe, name, short)
                cut["texts"] = "cut"
    remaining = budget - probe.ByteSize() - 8  # 8: the validation's own length prefix
    parts = sorted(
        [(sum(_field_size(c.ByteSize()) for c in items), name) for name, items in lists.items()]
        + [(_field_size(len(msg.partial_result)) if msg.partial_result else 0, "partial_result")]
    )
    left = len(parts)
    for size, name in parts:
        allowance = max(0, remaining // left)
        left -= 1
        if size <= allowance:
            remaining -= size
        elif name == "partial_result":
            remaining -= _cut_partial(msg, allowance, cut)
        else:
            items = lists[name]
            kept, used = _prefix(items, allowance)
            cut[name] = f"{kept}/{len(items)}"
            del items[kept:]
            remaining -= used
    if msg.ByteSize() > budget:
        cut["pack_error"] = "dropped"
        msg.Clear()


def _cut_partial(msg: pb.PackError, allowance: int, cut: dict[str, str]) -> int:
    raw = msg.partial_result
    doc = json_object(raw) or {}
    kept: dict[str, Any] = {}
    used = _field_size(2)
    for key, value in doc.items():
        size = len(orjson.dumps({key: value}))
        if used + size <= allowance:
            kept[key] = value
            used += size
    cut["partial_result_keys"] = f"{len(kept)}/{len(doc)}"
    cut["partial_result_bytes"] = str(len(raw))
    msg.partial_result = orjson.dumps(kept)
    return _field_size(len(msg.partial_result))


def _fit_status(rich: status_pb2.Status) -> None:
    """Keep the details, in order, that fit :data:`MAX_DETAILS_BYTES` beside the message
    (the first, ``ErrorInfo``, always); ``BadRequest`` keeps the violations that fit and
    says how many of how many in one more."""
    budget = MAX_DETAILS_BYTES - len(rich.message.encode()) - 16
    kept: list[any_pb2.Any] = []
    used = 0
    for original in rich.details:
        detail = original
        size = detail.ByteSize() + 4
        if detail.type_url == _BAD_REQUEST_URL and used + size > budget:
            bad = error_details_pb2.BadRequest.FromString(detail.value)
            total = len(bad.field_violations)
            count, _ = _prefix(bad.field_violations, budget - used - 64)
            del bad.field_violations[count:]
            if count:
                bad.field_violations.add(field="", description=f"[truncated: {count} of {total}]")
            detail = any_pb2.Any(type_url=_BAD_REQUEST_URL, value=bad.SerializeToString())
            size = detail.ByteSize() + 4
        if used + size > budget and kept:
            continue
        kept.append(detail)
        used += size
    del rich.details[:]
    rich.details.extend(kept)


# -- the parsing direction (client) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParsedStatus:
    """What a non-OK call carried, decoded."""

    status: grpc.StatusCode
    message: str
    error_info: error_details_pb2.ErrorInfo | None = None
    retry_delay: float | None = None
    field_violations: tuple[FieldViolation, ...] = ()
    pack_error: pb.PackError | None = None

    @property
    def code(self) -> str | None:
        """The pack error code, when the status carries one."""
        if self.pack_error is not None:
            return self.pack_error.code
        if self.error_info is not None and self.error_info.domain != REJECTION_DOMAIN:
            return self.error_info.metadata.get("code") or None
        return None

    @property
    def reason(self) -> str | None:
        return self.error_info.reason if self.error_info is not None else None


def parse_call(call: Any) -> ParsedStatus:
    """Decode the rich status of a failed call: ``call`` is a ``grpc.RpcError`` that is a
    ``grpc.Call`` (sync or ``grpc.aio``)."""
    return parse_status(call.code(), call.details(), call.trailing_metadata())


#: The details a client reads, by their type's full name (the type URL's last part).
_READ = {
    str(m.DESCRIPTOR.full_name): m
    for m in (
        error_details_pb2.ErrorInfo,
        error_details_pb2.RetryInfo,
        error_details_pb2.BadRequest,
        pb.PackError,
    )
}


def parse_status(
    status: grpc.StatusCode,
    message: str | None,
    trailing_metadata: Sequence[tuple[str, str | bytes]] | Any,
) -> ParsedStatus:
    """Decode the rich status of a failed call (tolerates its absence, a broken or hostile
    peer's bytes, and any one detail that does not decode: the status code still counts)."""
    raw = next(
        (v for k, v in trailing_metadata or () if k == DETAILS_KEY and isinstance(v, bytes)),
        None,
    )
    try:
        rich = status_pb2.Status.FromString(raw) if raw is not None else status_pb2.Status()
    except DecodeError:
        rich = status_pb2.Status()
    found: dict[type[Any], Any] = {}
    violations: list[FieldViolation] = []
    for detail in rich.details:
        kind = _READ.get(detail.type_url.rpartition("/")[2])
        try:
            decoded = kind.FromString(detail.value) if kind is not None else None
        except DecodeError:  # one undecodable detail does not hide the others
            continue
        if isinstance(decoded, error_details_pb2.BadRequest):
            violations.extend(
                FieldViolation(v.field, v.description) for v in decoded.field_violations
            )
        elif decoded is not None:
            found[kind] = decoded  # type: ignore[index]
    retry = found.get(error_details_pb2.RetryInfo)
    return ParsedStatus(
        status=status,
        message=rich.message or message or "",
        error_info=found.get(error_details_pb2.ErrorInfo),
        # 9e18 s or negative: bounded
        retry_delay=None
        if retry is None
        else clamp_retry_after(retry.retry_delay.seconds + retry.retry_delay.nanos / 1e9),
        field_violations=tuple(violations),
        pack_error=found.get(pb.PackError),
    )


#: The fixed encoding when nothing else can be built (not even from constants per call).
LAST_RESORT: grpc.Status = _end(_last_resort_status("", "", ""), False, None)
