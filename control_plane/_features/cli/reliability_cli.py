"""``packctl`` options for isolation, admission and input limits, auth and TLS; every default is
off.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from control_plane._features.grpc.admission import (
    DEFAULT_RETRY_AFTER,
    AdmissionLimits,
    parse_pack_limit,
)
from control_plane._features.grpc.answers import DEFAULT_ANSWER_BUDGET
from control_plane._features.grpc.auth import (
    ENV_CLIENT_TOKEN,
    ENV_SERVER_TOKENS,
    AuthConfigError,
    ClientTls,
    ServerTls,
    TokenAuth,
    read_token_file,
)
from control_plane._features.grpc.server import DEFAULT_MAX_MESSAGE_BYTES, ServerOptions
from control_plane._runtime.cli import positive_int
from control_plane._runtime.plugins import BUILTIN_FEATURES, feature_manager
from control_plane._runtime.runtime import DEFAULT_TIMEOUT, RuntimeConfig

__all__ = [
    "add_client_options",
    "add_serve_options",
    "client_kwargs",
    "runtime_config",
    "server_options",
]


def _pack_limit(text: str) -> tuple[str, int]:
    try:
        return parse_pack_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _answer_budget(text: str) -> int | None:
    """``--answer-budget MB``: megabytes, or 0 for none."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return value * 1024 * 1024 if value else None


def add_serve_options(p: argparse.ArgumentParser) -> None:
    """Reliability and security options of ``packctl serve``."""
    lim = p.add_argument_group("admission and input limits")
    lim.add_argument(
        "--max-in-flight",
        type=positive_int,
        default=None,
        metavar="N",
        help="calls in flight over all packs before RESOURCE_EXHAUSTED (default unlimited)",
    )
    lim.add_argument(
        "--pack-limit",
        action="append",
        type=_pack_limit,
        default=[],
        metavar="NAME=N",
        help="in-flight limit of one pack (repeatable)",
    )
    lim.add_argument(
        "--default-pack-limit",
        type=positive_int,
        default=None,
        metavar="N",
        help="in-flight limit of every pack without --pack-limit (default unlimited)",
    )
    lim.add_argument(
        "--retry-after",
        type=float,
        default=DEFAULT_RETRY_AFTER,
        metavar="S",
        help=f"RetryInfo delay sent with RESOURCE_EXHAUSTED (default {DEFAULT_RETRY_AFTER:g})",
    )
    lim.add_argument(
        "--max-input-bytes",
        type=positive_int,
        default=None,
        metavar="N",
        help="largest input document; larger ones get INVALID_ARGUMENT (default: only the "
        "message size limit applies)",
    )
    lim.add_argument(
        "--answer-budget",
        type=_answer_budget,
        default=DEFAULT_ANSWER_BUDGET,
        metavar="MB",
        help="megabytes of answers the server may hold unsent over all connections; past "
        "it new calls get RESOURCE_EXHAUSTED and the connections holding the most unread "
        f"bytes are closed (default {DEFAULT_ANSWER_BUDGET >> 20}; 0: no budget; "
        "docs/reliability.md)",
    )
    lim.add_argument(
        "--grpc-option",
        action="append",
        type=_grpc_option,
        default=[],
        metavar="KEY=VALUE",
        help="a grpc core channel argument for the server (repeatable; an integer VALUE is "
        "passed as one), e.g. grpc.max_connection_age_ms=600000; it overrides the "
        "connection bounds of docs/reliability.md",
    )
    sec = p.add_argument_group("authentication and TLS")
    sec.add_argument(
        "--auth-token-file",
        default=None,
        metavar="PATH",
        help="require 'authorization: Bearer <token>'; accepted tokens, one per line",
    )
    sec.add_argument(
        "--auth-token-env",
        default=None,
        metavar="VAR",
        help=f"also accept the comma-separated tokens in VAR (e.g. {ENV_SERVER_TOKENS})",
    )
    sec.add_argument(
        "--open-health",
        action="store_true",
        help="with auth: let grpc.health.v1 calls through without a token",
    )
    sec.add_argument("--tls-cert", default=None, metavar="PEM", help="server certificate chain")
    sec.add_argument("--tls-key", default=None, metavar="PEM", help="server private key")
    sec.add_argument(
        "--tls-client-ca",
        default=None,
        metavar="PEM",
        help="require client certificates signed by this CA (mutual TLS)",
    )


def runtime_config(args: argparse.Namespace) -> RuntimeConfig:
    """The :class:`~control_plane._runtime.runtime.RuntimeConfig` of any command's options.

    Every command that runs packs in this process (``serve``, ``worker``, ``--local``,
    ``gate --local``, ``mcp --local``) builds its runtime from here, so isolation and
    deadlines are the same whichever command runs a pack: the command's own fields, then
    each feature's (the ``runtime_config`` hook: isolation, MCP, grants). Options a command
    lacks take the runtime's defaults (packs declaring ``isolated=True`` are isolated
    regardless).
    """
    fields: dict[str, Any] = {}
    features = getattr(args, "features", BUILTIN_FEATURES)
    for part in reversed(feature_manager(features).hook.runtime_config(options=args)):
        fields.update(part)
    return RuntimeConfig(
        plugins=tuple(getattr(args, "plugin", ()) or ()),
        handler_threads=getattr(args, "threads", None),
        pack_threads=getattr(args, "pack_threads", None),
        default_timeout=getattr(args, "default_timeout", DEFAULT_TIMEOUT),
        max_message_bytes=getattr(args, "max_message_bytes", None),
        # The bearer tokens are ours: never a pack's program's nor a worker's.
        withheld_env=tuple(n for n in [getattr(args, "auth_token_env", None)] if n),
        **fields,
    )


def _grpc_option(text: str) -> tuple[str, int | str]:
    """``KEY=VALUE`` (``--grpc-option``) as a channel argument: ``grpc.`` keys only."""
    key, sep, value = text.partition("=")
    if not sep or not key.startswith("grpc.") or not value:
        raise argparse.ArgumentTypeError(f"{text!r} is not grpc.KEY=VALUE")
    try:
        return key, int(value)
    except ValueError:
        return key, value


def server_options(args: argparse.Namespace) -> ServerOptions:
    """:class:`~control_plane._features.grpc.server.ServerOptions` from ``serve`` options.

    Raises :class:`AuthConfigError` for unusable auth/TLS settings.
    """
    limits = AdmissionLimits(
        max_in_flight=args.max_in_flight,
        per_pack=dict(args.pack_limit),
        default_per_pack=args.default_pack_limit,
        retry_after=args.retry_after,
    )
    auth: TokenAuth | None = None
    if args.auth_token_file is not None or args.auth_token_env is not None:
        auth = TokenAuth.from_sources(
            token_file=args.auth_token_file,
            token_env=args.auth_token_env,
            open_health=args.open_health,
        )
    elif args.open_health:
        raise AuthConfigError("--open-health needs --auth-token-file or --auth-token-env")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise AuthConfigError("TLS needs both --tls-cert and --tls-key")
    tls: ServerTls | None = None
    if args.tls_cert is not None:
        tls = ServerTls(args.tls_cert, args.tls_key, args.tls_client_ca)
    elif args.tls_client_ca is not None:
        raise AuthConfigError("--tls-client-ca needs --tls-cert and --tls-key")
    return ServerOptions(
        grpc_options=tuple(getattr(args, "grpc_option", ())),
        max_message_bytes=getattr(args, "max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES),
        limits=limits if limits.enabled else None,
        max_input_bytes=args.max_input_bytes,
        answer_budget=getattr(args, "answer_budget", DEFAULT_ANSWER_BUDGET),
        auth=auth,
        tls=tls,
    )


def add_client_options(p: argparse.ArgumentParser) -> None:
    """Credentials options of the commands that call a control plane."""
    p.add_argument(
        "--token-file",
        default=None,
        metavar="PATH",
        help=f"send the bearer token in PATH (default: ${ENV_CLIENT_TOKEN} if set)",
    )
    p.add_argument("--tls-ca", default=None, metavar="PEM", help="connect over TLS; trust this CA")
    p.add_argument("--tls-cert", default=None, metavar="PEM", help="client certificate (mTLS)")
    p.add_argument("--tls-key", default=None, metavar="PEM", help="client private key (mTLS)")
    p.add_argument(
        "--tls-server-name",
        default=None,
        metavar="NAME",
        help="name to verify in the server certificate (default: the target's host)",
    )


def client_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """:class:`control_plane._features.grpc.client.Client` keywords (``token``, ``tls``) from the
    options."""
    kwargs: dict[str, Any] = {}
    token_file = getattr(args, "token_file", None)
    if token_file is not None:
        tokens = read_token_file(token_file)
        if not tokens:
            raise AuthConfigError(f"token file {token_file} holds no token")
        kwargs["token"] = tokens[0]
    elif os.environ.get(ENV_CLIENT_TOKEN):
        kwargs["token"] = os.environ[ENV_CLIENT_TOKEN].strip()
    ca, cert, key = (getattr(args, n, None) for n in ("tls_ca", "tls_cert", "tls_key"))
    name = getattr(args, "tls_server_name", None)
    if ca is not None or cert is not None or key is not None:
        kwargs["tls"] = ClientTls(ca=ca, cert=cert, key=key, server_name=name)
    return kwargs
