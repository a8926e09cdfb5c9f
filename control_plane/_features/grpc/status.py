"""Failures on the wire: the one table from code to gRPC status, and the rich status both ways."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import grpc
import orjson
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

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
from control_plane._kernel.rejection import REASONS, Rejection, RejectionViolation
from control_plane._kernel.vocabulary import BASELINE, EVERY_PACK_CODES, pack_code_status
from control_plane.v1 import control_plane_pb2 as pb

__all__ = [
    "DETAILS_KEY",
    "INVALID_INPUT_REASON",
    "INVALID_INPUT_STATUS",
    "MAX_DETAILS_BYTES",
    "MAX_STATUS_MESSAGE_BYTES",
    "NO_RETRY_PUSHBACK",
    "PUSHBACK_KEY",
    "REJECTION_DOMAIN",
    "RETRYABLE_STATUSES",
    "STATUS_BY_CODE",
    "UNKNOWN_PACK_REASON",
    "UNKNOWN_PACK_STATUS",
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
    "rejection_from_status",
    "rejection_status",
    "retry_pushback",
    "retryable_for",
    "service_config",
    "status_for",
    "to_grpc_status",
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
UNKNOWN_PACK_REASON = "UNKNOWN_PACK"
INVALID_INPUT_REASON = "INVALID_INPUT"
UNKNOWN_PACK_STATUS = grpc.StatusCode[REASONS["unknown_pack"].grpc_status]
INVALID_INPUT_STATUS = grpc.StatusCode[REASONS["invalid_input"].grpc_status]
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


def _baseline_table() -> Mapping[str, grpc.StatusCode]:
    codes = {**BASELINE, **EVERY_PACK_CODES}
    return MappingProxyType({code: grpc_status(info.grpc_status) for code, info in codes.items()})


#: Baseline code (and every pack's well-known code, ``not_permitted``) -> gRPC status, read
#: from the vocabulary.
STATUS_BY_CODE: Mapping[str, grpc.StatusCode] = _baseline_table()
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
    if msg.detail:
        fields["detail"] = msg.detail
    if msg.reference_id:
        fields["reference_id"] = msg.reference_id
    if msg.checks or msg.code == "artifact_failed":
        fields["checks"] = [check_from_proto(c) for c in msg.checks]
    if msg.recovery_hint:
        fields["recovery_hint"] = msg.recovery_hint
    return ErrorEnvelope.construct_trusted(**fields)


# -- the rich status ---------------------------------------------------------------------


def _pack_any(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def _type_url(descriptor: Any) -> str:
    return "type.googleapis.com/" + str(descriptor.full_name)


_ERROR_INFO_URL = _type_url(error_details_pb2.ErrorInfo.DESCRIPTOR)
_RETRY_INFO_URL = _type_url(error_details_pb2.RetryInfo.DESCRIPTOR)
_PACK_ERROR_URL = _type_url(pb.PackError.DESCRIPTOR)


def _error_info_bytes(
    outcome: Outcome, env: ErrorEnvelope, cut: Mapping[str, str] | None = None
) -> bytes:
    """The serialized ``ErrorInfo`` of a failed outcome.

    (Caching its static part per (pack, code) and appending the per-call metadata was
    measured: no faster than building the small message whole, so it is built whole.)
    """
    metadata = {
        "code": env.code,
        "request_id": outcome.request_id,
        "retryable": "true" if env.retryable else "false",
        "pack_version": outcome.version,
    }
    if env.reference_id:
        metadata["reference_id"] = env.reference_id
    if cut:
        parts = {key.removesuffix("_keys").removesuffix("_bytes") for key in cut}
        metadata["truncated"] = ",".join(sorted(parts))
        metadata.update(cut)
    domain = outcome.pack
    if len(domain) > _MAX_INFO_VALUE or any(len(v) > _MAX_INFO_VALUE for v in metadata.values()):
        domain = domain[:_MAX_INFO_VALUE]
        metadata = {k: v[:_MAX_INFO_VALUE] for k, v in metadata.items()}
    info = error_details_pb2.ErrorInfo(
        reason=reason_for(env.code), domain=domain, metadata=metadata
    )
    serialized: bytes = info.SerializeToString()
    return serialized


def _duration(seconds: float) -> duration_pb2.Duration:
    seconds = clamp_retry_after(float(seconds))  # Duration overflows past ~1e10 s
    whole = int(seconds)
    return duration_pb2.Duration(seconds=whole, nanos=round((seconds - whole) * 1e9))


def _bad_request(
    violations: Iterable[FieldViolation | Violation | RejectionViolation],
) -> error_details_pb2.BadRequest:
    return error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(
                field=scrub(v.field), description=scrub(v.description)
            )
            for v in violations
        ]
    )


def error_status(outcome: Outcome) -> status_pb2.Status:
    """The ``google.rpc.Status`` for a failed outcome (docs/grpc.md), bounded.

    Data protobuf or JSON cannot carry (integers beyond 64 bits, lone surrogates,
    non-finite numbers) is made encodable; the details are cut to fit
    :data:`MAX_DETAILS_BYTES` (see :func:`_fit`), ``ErrorInfo`` always kept.
    """
    if outcome.error is None:
        raise ValueError("outcome has no error")
    try:
        return _error_status(outcome)
    except (TypeError, ValueError, OverflowError, UnicodeError, RecursionError):
        return _error_status(_sanitized(outcome))


def _error_status(outcome: Outcome) -> status_pb2.Status:
    env = outcome.error
    assert env is not None
    status = status_for(env.code, env.retryable)
    pack_error = envelope_to_proto(outcome)
    retry: bytes | None = None
    if env.retry_after is not None:
        retry = error_details_pb2.RetryInfo(
            retry_delay=_duration(env.retry_after)
        ).SerializeToString()
    cut: dict[str, str] = {}
    if pack_error.ByteSize() > _PACK_ERROR_BUDGET:
        _fit(pack_error, _PACK_ERROR_BUDGET, cut)
    details = [any_pb2.Any(type_url=_ERROR_INFO_URL, value=_error_info_bytes(outcome, env, cut))]
    if retry is not None:
        details.append(any_pb2.Any(type_url=_RETRY_INFO_URL, value=retry))
    if "pack_error" not in cut:
        details.append(any_pb2.Any(type_url=_PACK_ERROR_URL, value=pack_error.SerializeToString()))
    return status_pb2.Status(
        code=status.value[0],
        message=_status_message(f"{env.code}: {env.message}"),
        details=details,
    )


# -- bounds: the details always fit gRPC's metadata limits --------------------------------

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


def _status_message(text: str) -> str:
    if not text.isascii():  # ASCII is valid UTF-8 as it is
        text = valid_text(text)
    raw = text.encode("utf-8")
    if len(raw) <= MAX_STATUS_MESSAGE_BYTES:
        return text
    return raw[: MAX_STATUS_MESSAGE_BYTES - 3].decode("utf-8", "ignore") + "..."


def _field_size(size: int) -> int:
    """Bytes a length-delimited field of ``size`` bytes takes (tag of up to 2 bytes)."""
    return 2 + max(1, (size.bit_length() + 6) // 7) + size


def _fit(msg: pb.PackError, budget: int, cut: dict[str, str]) -> None:
    """Cut ``msg`` to at most ``budget`` serialized bytes, saying what was cut in ``cut``
    (``ErrorInfo.metadata``): violations, checks and the validation's checks keep a prefix
    (``violations: "kept/total"``...), ``partial_result`` keeps the top-level keys that fit
    (``partial_result_keys``, ``partial_result_bytes``), every part getting a fair share.
    Texts of the envelope itself are cut first when they alone take half the budget; if
    it still cannot fit it is dropped (``pack_error: "dropped"``) and ``ErrorInfo`` alone
    says what happened."""
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
        [
            (sum(_field_size(c.ByteSize()) for c in msg.violations), "violations"),
            (sum(_field_size(c.ByteSize()) for c in msg.checks), "checks"),
            (sum(_field_size(c.ByteSize()) for c in msg.validation.checks), "validation_checks"),
            (_field_size(len(msg.partial_result)) if msg.partial_result else 0, "partial_result"),
        ]
    )
    left = len(parts)
    for size, name in parts:
        allowance = max(0, remaining // left)
        left -= 1
        remaining -= size if size <= allowance else _cut_part(msg, name, allowance, cut)
    if msg.ByteSize() > budget:
        cut["pack_error"] = "dropped"
        msg.Clear()


def _lists(msg: pb.PackError) -> dict[str, Any]:
    return {
        "violations": msg.violations,
        "checks": msg.checks,
        "validation_checks": msg.validation.checks,
    }


def _cut_part(msg: pb.PackError, name: str, allowance: int, cut: dict[str, str]) -> int:
    if name == "partial_result":
        return _cut_partial(msg, allowance, cut)
    items = _lists(msg)[name]
    total = len(items)
    used = kept = 0
    for item in items:
        size = _field_size(item.ByteSize())
        if used + size > allowance:
            break
        used += size
        kept += 1
    del items[kept:]
    cut[name] = f"{kept}/{total}"
    return used


def _cut_partial(msg: pb.PackError, allowance: int, cut: dict[str, str]) -> int:
    raw = msg.partial_result
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        doc = None
    kept: dict[str, Any] = {}
    total = 0
    if isinstance(doc, dict):
        total = len(doc)
        used = _field_size(2)
        for key, value in doc.items():
            size = len(orjson.dumps({key: value}))
            if used + size > allowance:
                continue
            kept[key] = value
            used += size
    cut["partial_result_keys"] = f"{len(kept)}/{total}"
    cut["partial_result_bytes"] = str(len(raw))
    msg.partial_result = orjson.dumps(kept)
    return _field_size(len(msg.partial_result))


def _sanitized(outcome: Outcome) -> Outcome:
    """``outcome`` rebuilt through the scrubbing constructors with every string valid
    UTF-8 and every value JSON/protobuf data (the slow path, when encoding failed)."""
    env = outcome.error

    def check(c: CheckRecord) -> CheckRecord:
        return CheckRecord.build(
            valid_text(c.id),
            c.severity if c.severity in _SEVERITY_TO_PB else "fail",
            valid_text(c.message),
            expected=json_safe(c.expected),
            actual=json_safe(c.actual),
            location=None if c.location is None else valid_text(c.location),
        )

    clean_env: ErrorEnvelope | None = None
    if env is not None:
        partial = json_safe(env.partial_result) if env.partial_result is not None else None
        clean_env = ErrorEnvelope.build(
            valid_text(env.code),
            valid_text(env.message),
            retryable=bool(env.retryable),
            origin=valid_text(env.origin),
            recovery_hint=None if env.recovery_hint is None else valid_text(env.recovery_hint),
            retry_after=(
                None if env.retry_after is None else clamp_retry_after(float(env.retry_after))
            ),
            partial_result=partial if isinstance(partial, dict) else None,
            violations=(
                None
                if env.violations is None
                else [
                    {"field": valid_text(v.field), "description": valid_text(v.description)}
                    for v in env.violations
                ]
            ),
            checks=None if env.checks is None else [check(c) for c in env.checks],
            detail=None if env.detail is None else valid_text(env.detail),
            reference_id=None if env.reference_id is None else valid_text(env.reference_id),
        )
    validation = outcome.validation
    return Outcome.build(
        valid_text(outcome.pack),
        valid_text(outcome.version),
        valid_text(outcome.request_id),
        validation=(
            None
            if validation is None
            else ValidationRecord.build(
                validation.status if validation.status in _SEVERITY_TO_PB else "fail",
                [check(c) for c in validation.checks],
            )
        ),
        error=clean_env,
    )


# -- the total encoder --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Encoded:
    """A failed outcome as the caller receives it: the ``grpc.Status`` to end the call
    with, and whether the last-resort ``internal_error`` encoding had to be used."""

    status: grpc.Status
    last_resort: bool = False


def _last_resort_status(pack: str, request_id: str, reference_id: str) -> status_pb2.Status:
    info = BASELINE["internal_error"]
    metadata = {
        "code": "internal_error",
        "retryable": "false",
        "request_id": valid_text(request_id)[:_MAX_INFO_VALUE],
        "encoding": "last_resort",
    }
    if reference_id:
        metadata["reference_id"] = valid_text(reference_id)[:_MAX_INFO_VALUE]
    return status_pb2.Status(
        code=STATUS_BY_CODE["internal_error"].value[0],
        message=f"internal_error: {info.title}",
        details=[
            _pack_any(
                error_details_pb2.ErrorInfo(
                    reason="INTERNAL_ERROR",
                    domain=valid_text(pack)[:_MAX_INFO_VALUE] or REJECTION_DOMAIN,
                    metadata=metadata,
                )
            )
        ],
    )


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
        pushback = pushback_for(env.retryable, env.retry_after) if env is not None else None
        # error_status's message is bounded already (_status_message): not twice.
        return Encoded(_ending(error_status(outcome), pushback))
    # The last line of the closed set: whatever went wrong, the caller gets a code.
    except Exception as exc:  # noqa: BLE001
        try:
            ref = reference(exc) if reference is not None else ""
            rich = _last_resort_status(outcome.pack, outcome.request_id, ref)
            return Encoded(to_grpc_status(rich), last_resort=True)
        # Even the constants failed (pack name or request id unencodable): fixed bytes.
        except Exception:  # noqa: BLE001
            return Encoded(LAST_RESORT, last_resort=True)


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
    metadata["retryable"] = "true" if rejection.retryable else "false"
    if rejection.pack:
        metadata["pack"] = rejection.pack
    if rid:
        metadata["request_id"] = scrub(rid, MAX_REJECTION_ECHO)  # the caller's text, echoed
    details = [
        _pack_any(
            error_details_pb2.ErrorInfo(
                reason=reason_for(rejection.reason), domain=REJECTION_DOMAIN, metadata=metadata
            )
        )
    ]
    if rejection.retry_after is not None:
        retry = error_details_pb2.RetryInfo(retry_delay=_duration(rejection.retry_after))
        details.append(_pack_any(retry))
    if rejection.violations:
        details.append(_pack_any(_bad_request(rejection.violations)))
    status = grpc.StatusCode[rejection.grpc_status]
    return status_pb2.Status(code=status.value[0], message=rejection.message, details=details)


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


class _Status(grpc.Status):
    """A ``grpc.Status`` for ``context.abort_with_status``."""

    __slots__ = ("code", "details", "trailing_metadata")

    def __init__(
        self, code: grpc.StatusCode, details: str, trailing: tuple[tuple[str, Any], ...]
    ) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = trailing


_CODE_BY_VALUE: Mapping[int, grpc.StatusCode] = MappingProxyType(
    {s.value[0]: s for s in grpc.StatusCode}
)


#: The statuses of retryable failures (pack codes and refusals); no permanent failure
#: ends with one of them unless it also says ``grpc-retry-pushback-ms: -1``.
RETRYABLE_STATUSES: tuple[grpc.StatusCode, ...] = tuple(
    dict.fromkeys(
        [status_for(code, True) for code, info in BASELINE.items() if info.retryable]
        + [_PACK_CODE_STATUS[True]]
        + [grpc.StatusCode[info.grpc_status] for info in REASONS.values() if info.retryable]
    )
)


def retry_pushback(rich: status_pb2.Status) -> str:
    """``grpc-retry-pushback-ms`` for ``rich``: ``RetryInfo``'s delay in milliseconds when
    the failure is retryable and says how long to wait; ``"-1"`` (do not retry) when it is
    not retryable; ``""`` (no header: the client's own backoff) otherwise."""
    retryable = None
    delay: str = ""
    for detail in rich.details:
        if detail.type_url == _ERROR_INFO_URL:
            info = error_details_pb2.ErrorInfo.FromString(detail.value)
            retryable = info.metadata.get("retryable")
        elif detail.type_url == _RETRY_INFO_URL:
            wait = error_details_pb2.RetryInfo.FromString(detail.value).retry_delay
            delay = str(max(0, wait.seconds * 1000 + math.ceil(wait.nanos / 1e6)))
    if retryable == "false":
        return NO_RETRY_PUSHBACK
    return delay if retryable == "true" else ""


def pushback_for(retryable: bool, retry_after: float | None) -> str:
    """:func:`retry_pushback` from the failure's own facts (no parsing): what the server
    passes for a pack's failure, whose envelope it holds."""
    if not retryable:
        return NO_RETRY_PUSHBACK
    if retry_after is None:
        return ""
    seconds = max(0.0, retry_after) if math.isfinite(retry_after) else 0.0
    return str(math.ceil(round(seconds * 1e9) / 1e6))  # as RetryInfo's Duration, in ms


def to_grpc_status(rich: status_pb2.Status, *, pushback: str | None = None) -> grpc.Status:
    """``rich`` as the ``grpc.Status`` to end a call with (details in the trailer, and
    ``grpc-retry-pushback-ms`` when there is one: ``pushback`` if given, e.g. from
    :func:`pushback_for`, else :func:`retry_pushback` reads it from ``rich``).

    Held to the same bounds as failed outcomes: the message to
    :data:`MAX_STATUS_MESSAGE_BYTES`, the details to :data:`MAX_DETAILS_BYTES`
    (``BadRequest`` keeps the violations that fit, ``ErrorInfo`` always stays). Encoded by
    ``grpc_status.rpc_status.to_status``."""
    rich.message = _status_message(rich.message)
    return _ending(rich, pushback)


def _ending(rich: status_pb2.Status, pushback: str | None) -> grpc.Status:
    """:func:`to_grpc_status` of a ``rich`` whose message is already bounded
    (:func:`_status_message`)."""
    if rich.ByteSize() > MAX_DETAILS_BYTES:
        _fit_status(rich)
    if rich.code not in _CODE_BY_VALUE or rich.code == 0:
        rich.code = grpc.StatusCode.UNKNOWN.value[0]
    encoded = rpc_status.to_status(rich)
    if pushback is None:
        pushback = retry_pushback(rich)
    if not pushback:
        return encoded
    trailing = (*encoded.trailing_metadata, (PUSHBACK_KEY, pushback))
    return _Status(encoded.code, encoded.details, trailing)


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


def _fit_status(rich: status_pb2.Status) -> None:
    budget = MAX_DETAILS_BYTES - len(rich.message.encode()) - 16
    kept: list[any_pb2.Any] = []
    used = 0
    for original in rich.details:
        detail = original
        size = detail.ByteSize() + 4
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR) and used + size > budget:
            bad = error_details_pb2.BadRequest()
            original.Unpack(bad)
            total = len(bad.field_violations)
            while bad.field_violations and used + bad.ByteSize() + 64 > budget:
                del bad.field_violations[-1]
            if bad.field_violations:
                bad.field_violations.add(
                    field="", description=f"[truncated: {len(bad.field_violations)} of {total}]"
                )
            detail = _pack_any(bad)
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


def parse_status(
    status: grpc.StatusCode,
    message: str | None,
    trailing_metadata: Sequence[tuple[str, str | bytes]] | Any,
) -> ParsedStatus:
    """Decode the rich status of a failed call (tolerates its absence)."""
    raw: bytes | None = None
    for key, value in trailing_metadata or ():
        if key == DETAILS_KEY and isinstance(value, bytes):
            raw = value
            break
    if raw is None:
        return ParsedStatus(status=status, message=message or "")
    try:
        rich = status_pb2.Status.FromString(raw)
    except DecodeError:  # a broken or hostile peer: the status code still counts
        return ParsedStatus(status=status, message=message or "")
    return _parsed(status, message, rich)


def parse_call(call: Any) -> ParsedStatus:
    """Decode the rich status of a failed call (``grpc_status.rpc_status.from_call``):
    ``call`` is a ``grpc.RpcError`` that is a ``grpc.Call`` (sync or ``grpc.aio``)."""
    status = call.code()
    message = call.details()
    try:
        rich = rpc_status.from_call(call)
    except (ValueError, DecodeError):  # code or message disagree, or undecodable details
        rich = None
    if rich is None:
        return parse_status(status, message, call.trailing_metadata())
    return _parsed(status, message, rich)


def _parsed(status: grpc.StatusCode, message: str | None, rich: status_pb2.Status) -> ParsedStatus:
    error_info: error_details_pb2.ErrorInfo | None = None
    retry_delay: float | None = None
    violations: list[FieldViolation] = []
    pack_error: pb.PackError | None = None
    for detail in rich.details:
        try:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                decoded = error_details_pb2.ErrorInfo()
                detail.Unpack(decoded)  # kept only once it decoded
                error_info = decoded
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                info = error_details_pb2.RetryInfo()
                detail.Unpack(info)
                delay = info.retry_delay.seconds + info.retry_delay.nanos / 1e9
                retry_delay = clamp_retry_after(delay)  # 9e18 s or negative: bounded
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                violations.extend(
                    FieldViolation(v.field, v.description) for v in bad.field_violations
                )
            elif detail.Is(pb.PackError.DESCRIPTOR):
                unpacked = pb.PackError()
                detail.Unpack(unpacked)  # kept only once it decoded
                pack_error = unpacked
        except DecodeError:  # one undecodable detail does not hide the others
            continue
    return ParsedStatus(
        status=status,
        message=rich.message or message or "",
        error_info=error_info,
        retry_delay=retry_delay,
        field_violations=tuple(violations),
        pack_error=pack_error,
    )


#: The fixed encoding when nothing else can be built (not even from constants per call).
LAST_RESORT: grpc.Status = to_grpc_status(_last_resort_status("", "", ""))
