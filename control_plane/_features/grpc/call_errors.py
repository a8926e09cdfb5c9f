"""What a failed call raises on the caller's side: one exception per code, and refusals."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import grpc

from control_plane._features.grpc import status as wire
from control_plane._kernel.errors import CapabilityPackError, RequestRejected
from control_plane._kernel.outcome import CheckRecord, ErrorEnvelope, Outcome, ValidationRecord
from control_plane._kernel.redact import scrub
from control_plane._kernel.rejection import Rejection
from control_plane._kernel.vocabulary import BASELINE, INTERNAL_ERROR, SNAKE_CASE

__all__ = [
    "ERROR_CLASSES",
    "ArtifactFailed",
    "AuthFailed",
    "DeadlineExceeded",
    "InternalError",
    "NetworkError",
    "NotFound",
    "Overloaded",
    "PackCallError",
    "PermanentError",
    "RateLimited",
    "RetryableError",
    "SchemaMismatch",
    "Timeout",
    "TransportError",
    "Unauthenticated",
    "error_from_outcome",
    "error_from_rpc",
    "is_code",
    "unreadable_answer",
]


class PackCallError(CapabilityPackError):
    """A pack call that ended with an error code from the pack's vocabulary."""

    #: The baseline code a subclass stands for ("" for the two family classes).
    CODE: ClassVar[str] = ""

    def __init__(
        self,
        envelope: ErrorEnvelope,
        *,
        pack: str = "",
        version: str = "",
        request_id: str = "",
        status: grpc.StatusCode | None = None,
        validation: ValidationRecord | None = None,
    ) -> None:
        super().__init__(f"{envelope.code}: {envelope.message}")
        self.envelope = envelope
        self.pack = pack
        self.version = version
        self.request_id = request_id
        self.status = status
        self.validation = validation

    @property
    def code(self) -> str:
        """The error code, inside the pack's declared vocabulary."""
        return self.envelope.code

    @property
    def retryable(self) -> bool:
        return self.envelope.retryable

    @property
    def message(self) -> str:
        return self.envelope.message

    @property
    def reference_id(self) -> str | None:
        """Quote this to the operator (``internal_error``)."""
        return self.envelope.reference_id

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before retrying (``rate_limited``)."""
        return self.envelope.retry_after

    @property
    def recovery_hint(self) -> str | None:
        return self.envelope.recovery_hint

    @property
    def outcome(self) -> Outcome:
        """The failed call as an :class:`Outcome` (``error`` set)."""
        return Outcome.model_construct(
            pack=self.pack,
            version=self.version,
            request_id=self.request_id,
            result=None,
            validation=self.validation,
            error=self.envelope,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class RetryableError(PackCallError):
    """A failure that may succeed when the same call is retried."""


class PermanentError(PackCallError):
    """A failure that retrying the same call will not fix."""


class AuthFailed(PermanentError):
    """The pack's downstream rejected or lacked credentials."""

    CODE = "auth_failed"


class RateLimited(RetryableError):
    """The downstream throttled the call; wait ``retry_after`` seconds."""

    CODE = "rate_limited"


class NotFound(PermanentError):
    """The target resource does not exist."""

    CODE = "not_found"


class Timeout(RetryableError):
    """The operation ran past its deadline."""

    CODE = "timeout"


class SchemaMismatch(PermanentError):
    """Data did not match its schema; ``partial_result`` holds what validated."""

    CODE = "schema_mismatch"

    @property
    def partial_result(self) -> dict[str, Any]:
        return dict(self.envelope.partial_result or {})


class NetworkError(RetryableError):
    """Connectivity to the downstream failed."""

    CODE = "network_error"


class InternalError(PermanentError):
    """An unclassified failure; report ``reference_id`` to the operator."""

    CODE = "internal_error"


class ArtifactFailed(PermanentError):
    """A strict call's validation found failures; ``checks`` lists them."""

    CODE = "artifact_failed"

    @property
    def checks(self) -> list[CheckRecord]:
        return list(self.envelope.checks or [])


#: Baseline code -> exception class.
ERROR_CLASSES: Mapping[str, type[PackCallError]] = MappingProxyType(
    {
        cls.CODE: cls
        for cls in (
            AuthFailed,
            RateLimited,
            NotFound,
            Timeout,
            SchemaMismatch,
            NetworkError,
            InternalError,
            ArtifactFailed,
        )
    }
)
assert set(ERROR_CLASSES) == set(BASELINE), "one exception class per baseline code"
assert all(
    issubclass(cls, RetryableError) == BASELINE[code].retryable
    for code, cls in ERROR_CLASSES.items()
), "exception families follow the vocabulary's retryable flags"


class TransportError(CapabilityPackError):
    """The call got no answer from a pack: the control plane was unreachable, or refused
    the call at the transport (``Overloaded``, ``Unauthenticated``).

    ``rejection`` is what adapters render: the refusal the server sent, or ``unavailable``
    when no control plane answered.
    """

    def __init__(
        self,
        status: grpc.StatusCode,
        details: str,
        target: str = "",
        *,
        rejection: Rejection | None = None,
    ) -> None:
        where = f" ({target})" if target else ""
        super().__init__(f"{status.name}{where}: {details}")
        self.status = status
        self.details = details
        self.target = target
        self.rejection = (
            rejection
            if rejection is not None
            else Rejection.of("unavailable", f"{status.name}{where}: {details}")
        )

    @property
    def code(self) -> str:
        """The refusal's reason (``unavailable``, ``overloaded``, ``unauthenticated``...)."""
        return self.rejection.reason

    @property
    def retryable(self) -> bool:
        """Whether sending the same call again may succeed (the reason's flag): nothing ran."""
        return self.rejection.retryable

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked the caller to wait (``overloaded``)."""
        return self.rejection.retry_after


class Overloaded(TransportError):
    """The control plane refused the call at an in-flight limit (``RESOURCE_EXHAUSTED``);
    nothing ran. Retry after ``retry_after`` seconds."""

    def __init__(
        self,
        status: grpc.StatusCode,
        details: str,
        target: str = "",
        *,
        retry_after: float | None = None,
        rejection: Rejection | None = None,
    ) -> None:
        super().__init__(
            status,
            details,
            target,
            rejection=rejection or Rejection.of("overloaded", details, retry_after=retry_after),
        )


class Unauthenticated(TransportError):
    """The control plane refused the caller's own credentials (``UNAUTHENTICATED``)."""


class DeadlineExceeded(TransportError):
    """The caller's own deadline fired before the control plane answered
    (``DEADLINE_EXCEEDED`` without details): no pack's answer arrived, so this is not a pack
    error and carries no pack code (the pack may not declare ``timeout``); its rejection is
    ``unavailable``. The pack may have run: retry only what is safe to repeat."""


def _error_class(code: str, retryable: bool) -> type[PackCallError]:
    cls = ERROR_CLASSES.get(code)
    if cls is not None:
        return cls
    return RetryableError if retryable else PermanentError


def error_from_outcome(outcome: Outcome) -> PackCallError:
    """The typed exception for a failed in-process outcome (``outcome.error`` set)."""
    if outcome.error is None:
        raise ValueError("outcome has no error")
    env = outcome.error
    return _error_class(env.code, env.retryable)(
        env,
        pack=outcome.pack,
        version=outcome.version,
        request_id=outcome.request_id,
        status=wire.status_for(env.code, env.retryable),
        validation=outcome.validation,
    )


#: Refusals raised as a class of their own; ``_REQUEST_REJECTED`` as the request's fault;
#: any other as a :class:`TransportError`.
_REFUSAL_CLASSES: Mapping[str, type[TransportError]] = MappingProxyType(
    {"overloaded": Overloaded, "unauthenticated": Unauthenticated}
)
_REQUEST_REJECTED = frozenset({"unknown_pack", "invalid_input"})
#: Longest code the client accepts from a peer (longer ones are no code of any vocabulary).
MAX_CODE_LENGTH = 128
#: Statuses a gRPC library reports when the transport failed before an answer arrived.
_NO_ANSWER = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNKNOWN, grpc.StatusCode.CANCELLED}
)


def is_code(text: str) -> bool:
    """Whether ``text`` could be a code of some pack's vocabulary (snake_case, bounded)."""
    return len(text) <= MAX_CODE_LENGTH and SNAKE_CASE.match(text) is not None


def unreadable_answer(what: str, status: grpc.StatusCode, target: str = "") -> TransportError:
    """The control plane answered, but with something this client cannot use (a reply that
    does not decode, a result that is not a JSON object, a refusal reason outside the
    vocabulary): ``adapter_failed``, not retryable, whether the pack ran is unknown."""
    where = f" at {target}" if target else ""
    message = f"the control plane{where} answered {what} (whether the pack ran is unknown)"
    return TransportError(
        status, message, target, rejection=Rejection.of("adapter_failed", message)
    )


def _no_code(code: str, message: str, origin: str) -> ErrorEnvelope:
    """The envelope for a failure whose code is no code at all: ``internal_error``."""
    shown = scrub(code, 64) if code else "an empty code"
    return ErrorEnvelope.build(
        INTERNAL_ERROR,
        f"the control plane sent {shown!r}, which is no error code: {message}",
        retryable=False,
        origin=origin,
    )


def error_from_rpc(
    exc: grpc.RpcError, *, pack: str = "", timeout: float | None = None, target: str = ""
) -> CapabilityPackError:
    """The typed exception for a failed call (``exc`` is a ``grpc.RpcError``/``grpc.Call``).

    The one place a failed call is read, whatever the peer sent: a pack code that is no
    code (empty, not snake_case) is ``internal_error``; a baseline code keeps the
    vocabulary's retryable flag; delays are bounded (:func:`~control_plane._features.grpc.status.
    parse_call`); a refusal outside the rejection vocabulary, or a status without our
    details that says neither "no answer" nor "unauthenticated", is ``adapter_failed``.
    """
    status: grpc.StatusCode = exc.code()
    parsed = wire.parse_call(exc)
    info = parsed.error_info
    msg = parsed.pack_error
    if info is not None and msg is None and info.domain == wire.REJECTION_DOMAIN:
        rejection = wire.rejection_from_status(parsed)
        if rejection is None:
            reason = scrub(info.metadata.get("code") or info.reason, 64)
            return unreadable_answer(
                f"{status.name} with the unknown refusal {reason!r}", status, target
            )
        if rejection.reason in _REQUEST_REJECTED:
            return RequestRejected.of(rejection)
        refused = _REFUSAL_CLASSES.get(rejection.reason, TransportError)
        return refused(status, parsed.message, target, rejection=rejection)
    where: dict[str, Any]
    if msg is not None:
        envelope = wire.envelope_from_proto(msg)
        if envelope.retry_after is None and parsed.retry_delay is not None:
            envelope = envelope.model_copy(update={"retry_after": parsed.retry_delay})
        where = {
            "pack": msg.pack or pack,
            "version": msg.pack_version,
            "request_id": msg.request_id,
            "validation": wire.validation_from_proto(msg.validation)
            if msg.HasField("validation")
            else None,
        }
    elif info is not None and (info.metadata.get("code") or info.reason):
        # A rich status without our PackError (another implementation of the API).
        code = info.metadata.get("code") or info.reason.lower()
        envelope = ErrorEnvelope.model_construct(
            code=code,
            message=parsed.message,
            retryable=wire.retryable_for(code, info.metadata.get("retryable") == "true"),
            origin=info.domain,
            retry_after=parsed.retry_delay,
            reference_id=info.metadata.get("reference_id"),
        )
        where = {"pack": info.domain or pack, "request_id": info.metadata.get("request_id", "")}
    else:
        return _no_pack_error(status, parsed.message, timeout, target)
    if not is_code(envelope.code):
        envelope = _no_code(envelope.code, envelope.message, envelope.origin)
    return _error_class(envelope.code, envelope.retryable)(envelope, status=status, **where)


def _no_pack_error(
    status: grpc.StatusCode, message: str, timeout: float | None, target: str
) -> TransportError:
    """A failed call without our rich status: the transport's own."""
    if status == grpc.StatusCode.DEADLINE_EXCEEDED:
        waited = f" of {timeout:g}s" if timeout is not None else ""
        where = f" at {target}" if target else ""
        message = (
            f"the call's deadline{waited} passed before the control plane{where} answered "
            "(the pack may have run)"
        )
        return DeadlineExceeded(
            status, message, target, rejection=Rejection.of("unavailable", message)
        )
    details = message or str(status)
    if status == grpc.StatusCode.UNAUTHENTICATED:
        return Unauthenticated(
            status, details, target, rejection=Rejection.of("unauthenticated", details)
        )
    if status in _NO_ANSWER:
        return TransportError(status, details, target)
    return unreadable_answer(
        f"{status.name} without a status this client reads: {details}", status, target
    )
