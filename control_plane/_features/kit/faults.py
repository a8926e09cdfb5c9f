"""The fault catalogue: exceptions, hangs and malformed returns the kit injects, with planted
secrets.
"""

from __future__ import annotations

import errno
import secrets
import socket
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from control_plane._kernel.errors import PackError

__all__ = [
    "FAULTS",
    "FAULTS_BY_NAME",
    "KIT_UNDECLARED_CODE",
    "Fault",
    "InjectedHTTPError",
    "Secrets",
    "fault",
]

#: The code of the injected typed error that no pack declares.
KIT_UNDECLARED_CODE = "kit_undeclared_code"

FaultKind = Literal["raise", "hang", "return"]


@dataclass(frozen=True)
class Secrets:
    """Credentials planted in injected failures, fresh per kit; none may reach a caller."""

    password: str
    bearer: str
    aws_key: str
    token: str

    @classmethod
    def plant(cls) -> Secrets:
        upper = string.ascii_uppercase + string.digits
        return cls(
            password=f"kitPw{secrets.token_hex(6)}Q9",
            bearer=f"kitBearer{secrets.token_hex(12)}",
            aws_key="AKIA" + "".join(secrets.choice(upper) for _ in range(16)),
            token=f"kitTok{secrets.token_hex(10)}",
        )

    def named(self) -> dict[str, str]:
        """Secret kind -> value."""
        return {
            "URL password": self.password,
            "bearer token": self.bearer,
            "AWS access key": self.aws_key,
            "token= value": self.token,
        }

    def text(self) -> str:
        """A failure text of the kind downstream libraries produce, carrying every secret."""
        return (
            f"POST https://kit:{self.password}@api.downstream.invalid/v1/items failed; "
            f"request headers: Authorization: Bearer {self.bearer}; "
            f"env AWS_ACCESS_KEY_ID={self.aws_key}; query token={self.token}"
        )


class _Response:
    """The ``response`` of an :class:`InjectedHTTPError`, shaped like requests/httpx."""

    def __init__(self, status: int, headers: Mapping[str, str], body: str) -> None:
        self.status_code = status
        self.headers = dict(headers)
        self.text = body
        self.content = body.encode()


class InjectedHTTPError(Exception):
    """An HTTP failure as client libraries raise it: ``status_code``, ``headers``, body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message)
        self.status_code = status
        self.headers = dict(headers or {})
        self.body = body
        self.response = _Response(status, self.headers, body)


@dataclass(frozen=True)
class Fault:
    """One injected failure. ``build(secrets)`` returns a fresh exception (``raise`` and
    ``hang``, raised after the hang) or the malformed output (``return``)."""

    name: str
    description: str
    kind: FaultKind
    build: Callable[[Secrets], Any]
    carries_secrets: bool = False


def _http(status: int, headers: Mapping[str, str] | None = None) -> Callable[[Secrets], Any]:
    def build(s: Secrets) -> InjectedHTTPError:
        return InjectedHTTPError(
            status,
            f"HTTP {status} from https://api.downstream.invalid/v1/items",
            headers=headers,
        )

    return build


def _secret_http(s: Secrets) -> InjectedHTTPError:
    return InjectedHTTPError(
        401,
        f"HTTP 401 Unauthorized: {s.text()}",
        headers={"WWW-Authenticate": "Bearer", "X-Echo-Authorization": f"Bearer {s.bearer}"},
        body=f'{{"error": "bad credentials", "token": "{s.token}", "seen": "{s.password}"}}',
    )


def _not_json(s: Secrets) -> dict[str, Any]:
    return {"kit": {1, 2, 3}}


#: Every fault, in the order the report lists them.
FAULTS: tuple[Fault, ...] = (
    Fault(
        "timeout",
        "TimeoutError: the downstream did not answer in time",
        "raise",
        lambda s: TimeoutError("kit: read from the downstream timed out"),
    ),
    Fault(
        "deadline",
        "the downstream hangs past the call's deadline",
        "hang",
        lambda s: TimeoutError("kit: hung past the deadline"),
    ),
    Fault(
        "connection_reset",
        "ConnectionResetError (ECONNRESET)",
        "raise",
        lambda s: ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
    ),
    Fault(
        "connection_refused",
        "ConnectionRefusedError (ECONNREFUSED)",
        "raise",
        lambda s: ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
    ),
    Fault(
        "dns_failure",
        "socket.gaierror: the host name does not resolve",
        "raise",
        lambda s: socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
    ),
    Fault("http_401", "HTTP 401 Unauthorized", "raise", _http(401)),
    Fault("http_403", "HTTP 403 Forbidden", "raise", _http(403)),
    Fault("http_404", "HTTP 404 Not Found", "raise", _http(404)),
    Fault("http_429", "HTTP 429 with Retry-After: 7", "raise", _http(429, {"Retry-After": "7"})),
    Fault("http_503", "HTTP 503 Service Unavailable", "raise", _http(503)),
    Fault(
        "secret_in_exception",
        "RuntimeError whose text carries a URL password, bearer token, AWS key, token=",
        "raise",
        lambda s: RuntimeError(f"kit: downstream failed: {s.text()}"),
        carries_secrets=True,
    ),
    Fault(
        "secret_in_http_error",
        "HTTP 401 whose text, headers and body carry secrets",
        "raise",
        _secret_http,
        carries_secrets=True,
    ),
    Fault(
        "secret_in_connection_error",
        "ConnectionError naming a URL with a password",
        "raise",
        lambda s: ConnectionError(
            f"cannot connect to https://kit:{s.password}@db.downstream.invalid:5432 "
            f"(token={s.token})"
        ),
        carries_secrets=True,
    ),
    Fault(
        "undeclared_code",
        f"a typed PackError with the undeclared code {KIT_UNDECLARED_CODE!r}",
        "raise",
        lambda s: PackError(KIT_UNDECLARED_CODE, "kit: a code nobody declared"),
    ),
    Fault(
        "unexpected_exception",
        "an unclassifiable ValueError",
        "raise",
        lambda s: ValueError("kit: unexpected value from the downstream"),
    ),
    Fault(
        "output_not_object",
        "the handler returns a list instead of an object",
        "return",
        lambda s: ["kit", "not", "an", "object"],
    ),
    Fault(
        "output_not_json",
        "the handler returns an object holding a set (not JSON data)",
        "return",
        _not_json,
    ),
    Fault(
        "output_breaks_schema",
        "the handler returns an object whose error field is a string",
        "return",
        lambda s: {"error": "kit: not an error object"},
    ),
    Fault(
        "output_undeclared_code",
        f"the handler returns an error with the undeclared code {KIT_UNDECLARED_CODE!r}",
        "return",
        lambda s: {"error": {"code": KIT_UNDECLARED_CODE, "message": f"token={s.token}"}},
        carries_secrets=True,
    ),
)

FAULTS_BY_NAME: Mapping[str, Fault] = {f.name: f for f in FAULTS}


def fault(name: str) -> Fault:
    """The catalogue's fault called ``name``; ``KeyError`` listing the names."""
    try:
        return FAULTS_BY_NAME[name]
    except KeyError:
        raise KeyError(f"no fault {name!r}; faults: {', '.join(FAULTS_BY_NAME)}") from None
