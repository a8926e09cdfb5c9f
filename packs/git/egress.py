"""Where git may connect: the remote's host checked against the egress grant, then pinned."""

from __future__ import annotations

import ipaddress
import shlex
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from control_plane.errors import PackError, network_error, not_permitted
from control_plane.tools import (
    EgressGrantError,
    EgressPolicy,
    EgressRefused,
    check_destination,
    curl_resolve,
    system_resolver,
)

if TYPE_CHECKING:
    from control_plane import PackReach
    from control_plane.tools import Address, Resolver

__all__ = ["DECLARED_EGRESS", "RESOLVER", "Pinned", "checked"]

#: What the git packs declare (and get with no grant): public addresses only.
DECLARED_EGRESS: Final = ("public",)
#: The resolver the check uses (a table in tests, so no name leaves the host).
RESOLVER: Resolver = system_resolver

_HTTP: Final = frozenset({"http", "https"})
_SSH: Final = frozenset({"ssh", "git+ssh", "ssh+git"})
_PORTS: Final = {"http": 80, "https": 443, "git": 9418, "ssh": 22, "git+ssh": 22, "ssh+git": 22}


@dataclass(frozen=True)
class Pinned:
    """What git is given so it connects only where the check looked."""

    #: ``(key, value)`` git configuration for this run (``http.curloptResolve``, ...).
    config: tuple[tuple[str, str], ...] = ()
    #: Options added to ssh's command line (``-o HostName=ADDR -o HostKeyAlias=HOST``).
    ssh_options: str = ""


def _policy(reach: PackReach) -> EgressPolicy:
    granted = reach.egress
    try:
        return EgressPolicy(DECLARED_EGRESS if granted is None else granted)
    except EgressGrantError as exc:
        raise not_permitted(f"the egress grant of {reach.pack} is invalid: {exc}") from None


def _host_port(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a network remote (scp-like ``[user@]host:path`` is ssh)."""
    if "://" in url:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _PORTS:
            raise not_permitted(
                f"git may not use the {scheme!r} transport on this server "
                "(http, https, git and ssh only)"
            )
        try:
            port = parts.port or _PORTS[scheme]
        except ValueError:
            raise not_permitted("the url's port is not a port") from None
        if not parts.hostname:
            raise not_permitted("the url names no host")
        return scheme, parts.hostname, port
    host = url.split(":", 1)[0].rpartition("@")[2]
    if host.startswith("[") and "]" in url:
        host = url[url.index("[") + 1 : url.index("]")]
    if not host:
        raise not_permitted("the url names no host")
    return "ssh", host, 22


def _resolve(host: str, port: int, policy: EgressPolicy, budget: float) -> list[Address]:
    """:func:`check_destination` within ``budget`` seconds (a hung resolver is a timeout)."""
    box: list[object] = []

    def work() -> None:
        try:
            box.append(check_destination(host, port, policy, RESOLVER))
        except (EgressRefused, OSError, UnicodeError) as exc:
            box.append(exc)

    thread = threading.Thread(target=work, name="git-egress-resolve", daemon=True)
    thread.start()
    thread.join(max(0.1, budget))
    if not box:
        raise PackError("timeout", "resolving the remote's host name took longer than allowed")
    found = box[0]
    if isinstance(found, EgressRefused):
        raise not_permitted(
            f"{found.reason} (the operator's egress grant; docs/grants.md); nothing was sent "
            "and git did not run: do not retry the same url"
        )
    if isinstance(found, BaseException):
        raise network_error("the host name could not be resolved")
    assert isinstance(found, list)
    return [a for a in found if isinstance(a, ipaddress.IPv4Address | ipaddress.IPv6Address)]


def checked(url: str, reach: PackReach, budget: float) -> Pinned:
    """Check ``url``'s host against ``reach``'s egress grant; how to pin git to it."""
    scheme, host, port = _host_port(url)
    addresses = _resolve(host, port, _policy(reach), budget)
    if scheme in _HTTP:
        return Pinned(
            config=(
                ("http.curloptResolve", curl_resolve(url, addresses)),
                ("http.followRedirects", "false"),
            )
        )
    if scheme in _SSH:
        address = str(addresses[0])
        return Pinned(
            ssh_options=(f"-o HostName={shlex.quote(address)} -o HostKeyAlias={shlex.quote(host)}")
        )
    return Pinned()
