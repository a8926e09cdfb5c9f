"""Caller authentication and transport security: bearer tokens, TLS, mutual TLS."""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from control_plane._kernel.limits import ConfigError, clip
from control_plane._kernel.rejection import Rejection

__all__ = [
    "AUTH_HEADER",
    "ENV_CLIENT_TOKEN",
    "ENV_SERVER_TOKENS",
    "HEALTH_METHODS",
    "AuthConfigError",
    "BearerAuthInterceptor",
    "ClientTls",
    "ServerTls",
    "TokenAuth",
    "channel_credentials",
    "is_loopback",
    "read_token_file",
]

logger = logging.getLogger("capability_packs.auth")

AUTH_HEADER = "authorization"
#: Server: accepted tokens, comma-separated (``packctl serve --auth-token-env``).
ENV_SERVER_TOKENS = "CAPABILITY_PACKS_TOKENS"
#: Client: the token ``packctl`` sends when ``--token-file`` is not given.
ENV_CLIENT_TOKEN = "CAPABILITY_PACKS_TOKEN"
HEALTH_METHODS = frozenset({"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"})
_MIN_TOKEN = 16
_DENIED = (
    "the call carries no accepted bearer credential; send the metadata 'authorization' "
    "with the value 'Bearer <token>'"
)


class AuthConfigError(ConfigError):
    """Auth or TLS configuration that cannot work (no tokens, unreadable files...)."""


def _read(path: str | Path, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise AuthConfigError(f"cannot read {what} {path}: {exc.strerror}") from None


def read_token_file(path: str | Path) -> list[str]:
    """Tokens in ``path``: one per line; blank lines and ``#`` comments skipped."""
    text = _read(path, "token file").decode("utf-8", errors="strict")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


class TokenAuth:
    """The accepted bearer tokens and the methods that need none."""

    def __init__(self, tokens: Iterable[str], *, open_health: bool = False) -> None:
        accepted = [t.strip() for t in tokens if t.strip()]
        if not accepted:
            raise AuthConfigError("bearer-token auth is on but no token was given")
        short = [t for t in accepted if len(t) < _MIN_TOKEN]
        if short:
            raise AuthConfigError(
                f"{len(short)} token(s) shorter than {_MIN_TOKEN} characters; use long "
                "random tokens (e.g. `openssl rand -hex 32`)"
            )
        self._tokens = tuple(t.encode() for t in accepted)
        self.open_methods = HEALTH_METHODS if open_health else frozenset()

    @classmethod
    def from_sources(
        cls,
        *,
        token_file: str | Path | None = None,
        token_env: str | None = None,
        open_health: bool = False,
    ) -> TokenAuth:
        """Tokens from ``token_file`` and the environment variable ``token_env``."""
        tokens: list[str] = []
        if token_file is not None:
            tokens.extend(read_token_file(token_file))
        if token_env is not None:
            value = os.environ.get(token_env)
            if value is None:
                raise AuthConfigError(f"environment variable {token_env} is not set")
            tokens.extend(part for part in value.split(",") if part.strip())
        return cls(tokens, open_health=open_health)

    def __len__(self) -> int:
        return len(self._tokens)

    def allows(self, metadata: Sequence[tuple[str, Any]] | None) -> bool:
        """True when ``metadata`` carries ``authorization: Bearer <accepted token>``."""
        presented: bytes | None = None
        for key, value in metadata or ():
            if key == AUTH_HEADER:
                text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
                scheme, _, credential = text.partition(" ")
                if scheme.lower() == "bearer":
                    presented = credential.strip().encode("utf-8", errors="replace")
                break
        if presented is None:
            return False
        ok = False
        for token in self._tokens:  # every token compared: timing says nothing about which
            ok |= hmac.compare_digest(presented, token)
        return ok


async def _deny(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
    from control_plane._features.grpc import status as wire  # status imports nothing of auth

    rejection = Rejection.of("unauthenticated", _DENIED)
    await context.abort_with_status(wire.refusal(rejection))


def _denying(handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same shape as ``handler`` that refuses with ``UNAUTHENTICATED``."""
    kwargs = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(_deny, **kwargs)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(_deny, **kwargs)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(_deny, **kwargs)
    return grpc.stream_stream_rpc_method_handler(_deny, **kwargs)


#: Refuses a call to any method, whatever its shape (bytes in, nothing out).
_DENY_ANY: grpc.RpcMethodHandler[Any, Any] = grpc.stream_stream_rpc_method_handler(_deny)


class BearerAuthInterceptor(grpc.aio.ServerInterceptor):
    """Server interceptor: calls without an accepted bearer token reach no servicer."""

    def __init__(self, auth: TokenAuth) -> None:
        self.auth = auth
        #: Calls refused so far.
        self.denied = 0

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = handler_call_details.method
        if method in self.auth.open_methods or self.auth.allows(
            handler_call_details.invocation_metadata
        ):
            return await continuation(handler_call_details)
        handler = await continuation(handler_call_details)
        self.denied += 1
        logger.warning(
            "unauthenticated call to %s refused",
            clip(method, 256) if isinstance(method, str) else "?",
            extra={"event": "unauthenticated", "status": "UNAUTHENTICATED"},
        )
        if handler is None:
            # An unknown method is refused like a known one: answering UNIMPLEMENTED
            # before authentication would tell anyone which methods exist.
            return _DENY_ANY
        return _denying(handler)


@dataclass(frozen=True, slots=True)
class ServerTls:
    """Server TLS from PEM files; ``client_ca`` turns on mutual TLS (client certs required)."""

    cert: str | Path
    key: str | Path
    client_ca: str | Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        """The ``grpc.ServerCredentials`` (files read now; errors name the file)."""
        chain = _read(self.cert, "TLS certificate")
        key = _read(self.key, "TLS private key")
        ca = _read(self.client_ca, "client CA") if self.client_ca is not None else None
        return grpc.ssl_server_credentials(
            [(key, chain)], root_certificates=ca, require_client_auth=ca is not None
        )


@dataclass(frozen=True, slots=True)
class ClientTls:
    """Client TLS: ``ca`` to verify the server (default: system roots), ``cert``/``key``
    for mutual TLS, ``server_name`` to override the name checked in the server's cert."""

    ca: str | Path | None = None
    cert: str | Path | None = None
    key: str | Path | None = None
    server_name: str | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        if (self.cert is None) != (self.key is None):
            raise AuthConfigError("a client certificate needs both cert and key")
        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca, "CA certificate") if self.ca is not None else None,
            private_key=_read(self.key, "TLS private key") if self.key is not None else None,
            certificate_chain=(
                _read(self.cert, "TLS certificate") if self.cert is not None else None
            ),
        )

    def options(self) -> list[tuple[str, Any]]:
        return [("grpc.ssl_target_name_override", self.server_name)] if self.server_name else []


def is_loopback(target: str) -> bool:
    """True when ``target`` (``host:port``) names this host (localhost, 127/8, ::1)."""
    host = target.rsplit(":", 1)[0] if ":" in target else target
    host = host.removeprefix("ipv4:").removeprefix("ipv6:").strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def channel_credentials(
    target: str, *, token: str | None = None, tls: ClientTls | None = None
) -> grpc.ChannelCredentials | None:
    """Credentials for a channel to ``target``; ``None`` means a plain insecure channel.

    A token without TLS is only sent to a loopback target; elsewhere it would cross the
    network in clear, and :class:`AuthConfigError` says so.
    """
    if tls is not None:
        creds = tls.credentials()
    elif token is not None:
        if not is_loopback(target):
            raise AuthConfigError(
                f"refusing to send a bearer token to {target} without TLS; "
                "pass a CA (--tls-ca) or use a loopback address"
            )
        creds = grpc.local_channel_credentials(grpc.LocalConnectionType.LOCAL_TCP)
    else:
        return None
    if token is not None:
        creds = grpc.composite_channel_credentials(creds, grpc.access_token_call_credentials(token))
    return creds
