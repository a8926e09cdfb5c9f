"""Reaching a granted destination: resolve a name once, keep the addresses the grant allows
(:func:`control_plane._kernel.egress.allowed_addresses`: core decides), connect to exactly one
of them. Core opens no socket; this is where a pack's egress leaves the process.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import TypeAlias

from control_plane._kernel.egress import (
    Address,
    EgressPolicy,
    Resolver,
    allowed_addresses,
    literal_address,
    refuse_unresolved,
    url_port,
)

__all__ = [
    "Connector",
    "check_destination",
    "check_url",
    "open_connection",
    "system_resolver",
    "tcp_connector",
]

#: ``(address, port, timeout) -> connected socket``.
Connector: TypeAlias = Callable[[Address, int, float], socket.socket]


def system_resolver(host: str, port: int) -> list[Address]:
    """The system resolver's addresses for ``host`` (``socket.gaierror`` when none)."""
    found: list[Address] = []
    for family, _, _, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        text = str(sockaddr[0])
        if family == socket.AF_INET6 and len(sockaddr) == 4 and sockaddr[3] and "%" not in text:
            text = f"{text}%{sockaddr[3]}"
        address = ipaddress.ip_address(text)
        if address not in found:
            found.append(address)
    return found


def check_destination(
    host: str, port: int, policy: EgressPolicy, resolver: Resolver = system_resolver
) -> list[Address]:
    """Resolve ``host`` once; the addresses the policy allows, in the resolver's order. A
    name no entry of the policy can admit on ``port`` is refused without a lookup.

    Raises :class:`~control_plane._kernel.egress.EgressRefused` when it allows none (naming the
    first refused address's category, never the address, which may be the operator's
    secret) and lets the resolver's own failure (``OSError``) through.
    """
    literal = literal_address(host)
    if literal is None:
        refuse_unresolved(host, port, policy)  # no lookup for a name no entry can admit
    addresses = [literal] if literal is not None else list(resolver(host, port))
    if not addresses:
        raise socket.gaierror(socket.EAI_NONAME, "the name resolved to no address")
    return allowed_addresses(host, port, addresses, policy)


def check_url(
    url: str, policy: EgressPolicy, resolver: Resolver = system_resolver
) -> list[Address]:
    """:func:`check_destination` for a URL's host and port (git, http, ssh and the like).

    A URL without a host (``file://``, a path, scp-like ``user@host:path``) is refused: a
    tool given one reaches the local file system or parses the host its own way.
    """
    host, port = url_port(url)
    return check_destination(host, port, policy, resolver)


def tcp_connector(
    address: Address,
    port: int,
    timeout: float,
    *,
    on_socket: Callable[[socket.socket], None] | None = None,
) -> socket.socket:
    """A TCP socket connected to exactly ``address``.

    ``on_socket`` sees the socket before the connect (to shut it down from another thread
    when the call is cancelled: bind it with ``functools.partial``).
    """
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if on_socket is not None:
            on_socket(sock)
        sock.settimeout(timeout)
        sock.connect((str(address), port))
    except BaseException:
        sock.close()
        raise
    return sock


def open_connection(
    host: str,
    port: int,
    policy: EgressPolicy,
    timeout: Callable[[], float],
    *,
    resolver: Resolver = system_resolver,
    connector: Connector = tcp_connector,
) -> socket.socket:
    """A socket connected to a checked address of ``host`` (the first that answers).

    ``timeout()`` gives the seconds left for each attempt (it may raise to stop). The last
    connect failure is raised when every allowed address fails.
    """
    failure: OSError | None = None
    for address in check_destination(host, port, policy, resolver):
        try:
            return connector(address, port, timeout())
        except OSError as exc:
            failure = exc
    assert failure is not None
    raise failure
