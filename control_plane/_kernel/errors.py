"""The runtime's exception tree: one root, :class:`PackError` and :class:`RequestRejected` beneath
it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from control_plane._kernel.rejection import Rejection

__all__ = [
    "CapabilityPackError",
    "FieldViolation",
    "InvalidInput",
    "PackError",
    "PluginLoadError",
    "RequestRejected",
    "UnknownPack",
    "artifact_failed",
    "auth_failed",
    "network_error",
    "not_found",
    "rate_limited",
    "schema_mismatch",
    "timeout",
]

_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


class CapabilityPackError(Exception):
    """Root of every exception raised by the capability-packs runtime."""


class PackError(CapabilityPackError):
    """A typed failure raised by a pack handler.

    ``code`` is a baseline code or one of the pack's own declared codes. The payload
    keywords follow the vocabulary: ``retry_after`` for ``rate_limited``, ``partial_result``
    for ``schema_mismatch``. ``absorbs`` is ignored here; pack codes declare what they
    absorb in their manifest.
    """

    def __init__(
        self,
        code: str,
        message: str = "",
        *,
        retry_after: float | None = None,
        partial_result: Mapping[str, Any] | None = None,
        violations: Sequence[FieldViolation] = (),
    ) -> None:
        if not _SNAKE.match(code):
            raise ValueError(f"error code {code!r} is not snake_case")
        if retry_after is not None and not (math.isfinite(retry_after) and retry_after >= 0):
            raise ValueError("retry_after must be a finite number >= 0")
        super().__init__(message or code)
        self.code = code
        self.message = message or code
        self.retry_after = retry_after
        self.partial_result = dict(partial_result) if partial_result is not None else None
        self.violations = tuple(violations)

    def __repr__(self) -> str:
        return f"PackError(code={self.code!r}, message={self.message!r})"


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One place where a document broke its schema: a JSON pointer and a reason."""

    field: str
    description: str

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "description": self.description}


class RequestRejected(CapabilityPackError):
    """The control plane refused the request before any pack handler ran.

    ``rejection`` is the :class:`~control_plane._kernel.rejection.Rejection` a caller
    receives (reason from the closed vocabulary, scrubbed message, violations); every
    adapter renders that value. :meth:`of` rebuilds the right subclass from a rejection
    received as data (a client decoding a status, a bridge decoding a payload).
    """

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(rejection.message)
        self.rejection = rejection
        #: True once the ``request_refused`` hook was told of it (the invoker does, for
        #: every refusal it raises, whatever adapter took the request): an adapter that
        #: reports refusals of its own does not report this one twice.
        self.reported = False

    @property
    def reason(self) -> str:
        return self.rejection.reason

    @staticmethod
    def of(rejection: Rejection) -> RequestRejected:
        """The exception for ``rejection``: ``UnknownPack``, ``InvalidInput`` or this class."""
        if rejection.reason == "unknown_pack":
            return UnknownPack._from(rejection)
        if rejection.reason == "invalid_input":
            return InvalidInput._from(rejection)
        return RequestRejected(rejection)


class UnknownPack(RequestRejected):
    """No pack of that name is loaded."""

    def __init__(self, name: str, known: Sequence[str] = (), *, failed: str | None = None) -> None:
        """``failed``: why a pack of that name was rejected at load time, if one was."""
        hint = f"; loaded packs: {', '.join(sorted(known))}" if known else ""
        label = repr(name) if name else "(empty name)"
        where = FieldViolation("pack", f"no pack named {name!r} is loaded (ListPacks)")
        message = f"unknown pack {label}{hint}"
        if failed is not None:
            message = f"pack {label} failed to load, so it is not served: {failed}"
        super().__init__(Rejection.of("unknown_pack", message, pack=name, violations=[where]))
        self.name = name

    @classmethod
    def _from(cls, rejection: Rejection) -> UnknownPack:
        exc = cls.__new__(cls)
        RequestRejected.__init__(exc, rejection)
        exc.name = rejection.pack
        return exc


class InvalidInput(RequestRejected):
    """The input document is not valid JSON or does not match the pack's input schema."""

    def __init__(self, pack: str, violations: Sequence[FieldViolation]) -> None:
        first = violations[0] if violations else FieldViolation("", "invalid input")
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        where = first.field or "/"
        message = f"invalid input for {pack}: {where}: {first.description}{more}"
        super().__init__(Rejection.of("invalid_input", message, pack=pack, violations=violations))
        self.pack = self.rejection.pack
        self.violations = tuple(
            FieldViolation(v.field, v.description) for v in self.rejection.violations
        )

    @classmethod
    def _from(cls, rejection: Rejection) -> InvalidInput:
        exc = cls.__new__(cls)
        RequestRejected.__init__(exc, rejection)
        exc.pack = rejection.pack
        exc.violations = tuple(FieldViolation(v.field, v.description) for v in rejection.violations)
        return exc


class PluginLoadError(CapabilityPackError):
    """A plugin or one of its packs was rejected at load time."""

    def __init__(self, plugin: str, reason: str, pack: str | None = None) -> None:
        subject = f"plugin {plugin!r}" + (f", pack {pack!r}" if pack else "")
        super().__init__(f"{subject}: {reason}")
        self.plugin = plugin
        self.pack = pack
        self.reason = reason


# Constructors for the baseline codes, so handlers read as the vocabulary does.


def auth_failed(message: str = "downstream rejected the credentials") -> PackError:
    """The downstream rejected or lacked credentials."""
    return PackError("auth_failed", message)


def rate_limited(retry_after: float, message: str = "downstream rate limit") -> PackError:
    """The downstream throttled the call; ``retry_after`` is in seconds."""
    return PackError("rate_limited", message, retry_after=retry_after)


def not_found(message: str = "resource not found") -> PackError:
    """The target resource does not exist."""
    return PackError("not_found", message)


def timeout(message: str = "operation timed out") -> PackError:
    """The operation ran past its deadline."""
    return PackError("timeout", message)


def network_error(message: str = "network failure") -> PackError:
    """Connectivity to the downstream failed."""
    return PackError("network_error", message)


def schema_mismatch(
    partial_result: Mapping[str, Any] | None = None,
    message: str = "data did not match the expected schema",
    violations: Sequence[FieldViolation] = (),
    *,
    partial: Mapping[str, Any] | None = None,
) -> PackError:
    """Data did not match its schema; ``partial_result`` is the part that did validate.

    ``partial=`` is the same argument under the vocabulary's shorter name.
    """
    if partial is not None and partial_result is not None:
        raise TypeError("give the partial result once: partial_result or partial")
    result = partial if partial is not None else partial_result
    if result is None:
        raise TypeError("schema_mismatch needs the part that did validate (partial=...)")
    return PackError("schema_mismatch", message, partial_result=result, violations=violations)


def artifact_failed(message: str = "artifact failed validation") -> PackError:
    """Reserved for strict mode; handlers normally return findings instead."""
    return PackError("artifact_failed", message)
