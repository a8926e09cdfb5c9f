"""``packctl mcp``: serve the packs to MCP clients over stdio or streamable HTTP."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import sys
from typing import Any

from control_plane._features.cli.reliability_cli import client_kwargs
from control_plane._kernel.hookspecs import hookimpl

__all__ = ["add_commands", "is_loopback", "run_mcp"]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (``[::1]`` too)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _http_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    if not is_loopback(host):
        raise argparse.ArgumentTypeError(
            f"{host} is not a loopback address: the MCP bridge has no authentication, "
            "so it listens on 127.0.0.1, ::1 or localhost only"
        )
    return host, int(port)


@hookimpl
def add_commands(subparsers: Any) -> None:
    """Add ``mcp`` to an argparse ``add_subparsers()`` object."""
    from control_plane._features.cli.cli import _positive_float, add_backend_options

    p = subparsers.add_parser(
        "mcp",
        help="serve the packs as MCP tools to agents (stdio, or streamable HTTP)",
        description="Serve every loaded pack as an MCP tool whose output schema and "
        "description carry the pack's closed error vocabulary. Stdio by default; "
        "--http serves streamable HTTP on a loopback address.",
    )
    add_backend_options(p)
    p.add_argument(
        "--http",
        type=_http_address,
        default=None,
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback only; "
        "port 0 picks one, printed on stderr)",
    )
    p.add_argument(
        "--tool-names",
        choices=("dotted", "underscore"),
        default="dotted",
        help="tool names: the pack's dotted name (default) or dots as underscores, for "
        "agents that refuse dots",
    )
    p.add_argument(
        "--deadline",
        type=_positive_float,
        default=None,
        metavar="S",
        help="deadline of every call in seconds (default: the control plane's; 300 with --local)",
    )
    p.add_argument(
        "--header-timeout",
        type=_positive_float,
        default=10.0,
        metavar="S",
        help="with --http: close a connection that has not sent a request's complete headers "
        "S seconds after it opened or after its previous response (default 10)",
    )
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="warning")
    p.set_defaults(func=run_mcp)


def _configure_logging(level: str) -> None:
    from control_plane._features.grpc.server import ScrubbingFormatter

    handler = logging.StreamHandler(sys.stderr)
    # Scrubbed like every log line the control plane writes (docs/redaction.md).
    handler.setFormatter(ScrubbingFormatter("packctl mcp: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def run_mcp(args: argparse.Namespace) -> int:
    """The ``packctl mcp`` handler: serve until the client goes away or a signal."""
    from control_plane._features.cli.cli import EXIT_OK, EXIT_USAGE, UsageProblem, local_runtime

    try:
        from control_plane._features.mcp.bridge.server import (
            Bridge,
            ListenError,
            serve_http,
            serve_stdio,
        )
    except ImportError as exc:
        print(
            f"packctl mcp: the MCP SDK is missing ({exc}); "
            "install it with: pip install 'capability-packs[mcp]'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from control_plane._features.cli.backends import Backend, LocalBackend, RemoteBackend

    if args.mcp_config and not args.local:
        print(
            "packctl mcp: --mcp-config applies with --local; a control plane started with "
            "`packctl serve --mcp-config` serves those tools to --target",
            file=sys.stderr,
        )
        return EXIT_USAGE
    _configure_logging(args.log_level)
    # Stdout is the MCP stream: a plugin that prints while loading must not corrupt it.
    runtime = None
    with contextlib.redirect_stdout(sys.stderr):
        try:
            runtime = local_runtime(args) if args.local else None
        except UsageProblem as exc:
            print(f"packctl mcp: {exc}", file=sys.stderr)
            return EXIT_USAGE
    try:
        remote_kwargs = {} if args.local else client_kwargs(args)
    except (OSError, ValueError) as exc:  # AuthConfigError is a ValueError; unreadable files
        print(f"packctl mcp: {exc}", file=sys.stderr)
        if runtime is not None:
            runtime.close()
        return EXIT_USAGE

    def announce(bridge: Bridge, where: str) -> None:
        if bridge.loaded:
            names = ", ".join(bridge.tools) or "none"
            line = f"{len(bridge.tools)} tool(s) from {bridge.backend.where} over {where}: {names}"
        else:
            line = (
                f"serving over {where}; the control plane at {bridge.backend.where} is not "
                "reachable yet (retried on the next tools/list)"
            )
        print(f"packctl mcp: {line}", file=sys.stderr, flush=True)

    async def main() -> None:
        backend: Backend
        if runtime is not None:
            backend = LocalBackend(runtime)
        else:
            backend = RemoteBackend(args.target, **remote_kwargs)
        bridge = Bridge(backend, naming=args.tool_names, deadline=args.deadline)
        try:
            if args.http is None:
                await serve_stdio(bridge, ready=lambda b: announce(b, "stdio"))
            else:
                host, port = args.http
                await serve_http(
                    bridge,
                    host,
                    port,
                    ready=lambda b, url: announce(b, f"streamable HTTP {url}"),
                    header_timeout=args.header_timeout,
                )
        finally:
            await bridge.close()

    try:
        asyncio.run(main())
    except ListenError as exc:
        print(f"packctl mcp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
