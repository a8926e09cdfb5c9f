"""Where git may connect: the remote's host checked against the egress grant, then pinned."""

from __future__ import annotations

import ipaddress
import shlex
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

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
    #: The URL git is given, rebuilt from the one parse the check used (``None``: as given).
    url: str | None = None
    #: The TCP port the check saw: the only one git (and ssh) may connect to.
    port: int | None = None


@dataclass(frozen=True)
class _Parsed:
    """A network remote as the check reads it, once: what git is then given is rebuilt
    from these parts, so git cannot read the URL another way (``[a]@b``, ``a@b@c``)."""

    scheme: str
    user: str
    host: str
    port: int
    #: Everything after the authority (path, query), exactly as given.
    rest: str

    def url(self, host: str | None = None) -> str:
        shown = host if host is not None else self.host
        if ":" in shown:
            shown = f"[{shown}]"
        user = f"{self.user}@" if self.user else ""
        return f"{self.scheme}://{user}{shown}:{self.port}{self.rest}"


def _policy(reach: PackReach) -> EgressPolicy:
    granted = reach.egress
    try:
        return EgressPolicy(DECLARED_EGRESS if granted is None else granted)
    except EgressGrantError as exc:
        raise not_permitted(f"the egress grant of {reach.pack} is invalid: {exc}") from None


def _authority(url: str) -> tuple[str, str, str]:
    """``(scheme, authority, rest)`` of ``scheme://authority/rest``."""
    scheme, _, tail = url.partition("://")
    cut = min((i for i in (tail.find(c) for c in "/?#") if i >= 0), default=len(tail))
    return scheme.lower(), tail[:cut], tail[cut:]


def _parse(url: str) -> _Parsed | None:
    """``url`` as one parse: a ``scheme://`` remote, else ``None`` (scp-like ``host:path``).
    Refuses what two parsers could read differently: more than one ``@``, brackets around
    anything but an IPv6 address, a user in a ``git://``/http(s) URL (http credentials were
    moved to a header before), a percent sign, a space or a non-ASCII letter in the host
    (IDNA differs between Python and libcurl), a user that starts like an option, a port
    that is not a number."""
    if "://" not in url:
        return None
    scheme, authority, rest = _authority(url)
    if scheme not in _PORTS:
        raise not_permitted(
            f"git may not use the {scheme!r} transport on this server "
            "(http, https, git and ssh only)"
        )
    if authority.count("@") > 1:
        raise not_permitted("the url's host part holds more than one '@'")
    user, _, hostport = authority.rpartition("@")
    if user and scheme not in _SSH:
        raise not_permitted(f"a {scheme}:// url names no user; give the credential field")
    if hostport.startswith("["):
        inner, bracket, after = hostport[1:].partition("]")
        if not bracket or not _is_ipv6(inner) or (after and not after.startswith(":")):
            raise not_permitted("the url's host is not a host name or address")
        host, port_text = inner, after[1:]
    else:
        host, _, port_text = hostport.partition(":")
    if not host or any(c in host for c in "%[]@ \t\\") or host.startswith("-"):
        raise not_permitted("the url names no host (or not one git would read the same way)")
    if not host.isascii():
        # Python's IDNA (2003) and libcurl's (UTS 46) map some names differently: the
        # check would resolve one host, curl another. Give the name as punycode.
        raise not_permitted("the url's host is not ASCII: give an IDN host as punycode (xn--)")
    if user.startswith("-") or not user.isascii() or any(c in user for c in " \t\\"):
        raise not_permitted("the url's user is not one ssh would read as a user name")
    if port_text and not (port_text.isascii() and port_text.isdigit()):
        raise not_permitted("the url's port is not a port")
    port = int(port_text) if port_text else _PORTS[scheme]
    if not 0 < port < 65536:
        raise not_permitted("the url's port is not a port")
    return _Parsed(scheme, user, host.lower(), port, rest)


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _host_port(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a network remote (scp-like ``[user@]host:path`` is ssh)."""
    parsed = _parse(url)
    if parsed is not None:
        return parsed.scheme, parsed.host, parsed.port
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
    """Check ``url``'s host against ``reach``'s egress grant; how to pin git to it.

    One parse (:func:`_parse`) gives both the host checked and the URL git is given:
    http(s) rebuilt with that host and ``http.curloptResolve`` to the checked addresses;
    ``git://`` rebuilt with the checked address itself (git resolves nothing); ssh with
    ``HostName`` the checked address. The port checked is the only one the kernel lets git
    connect to (``ctx.reach.run(connect=...)``)."""
    parsed = _parse(url)
    scheme, host, port = _host_port(url)
    addresses = _resolve(host, port, _policy(reach), budget)
    if scheme in _HTTP:
        assert parsed is not None
        given = parsed.url()
        return Pinned(
            config=(
                ("http.curloptResolve", curl_resolve(given, addresses)),
                ("http.followRedirects", "false"),
            ),
            url=given,
            port=port,
        )
    if scheme in _SSH:
        address = str(addresses[0])
        return Pinned(
            ssh_options=(f"-o HostName={shlex.quote(address)} -o HostKeyAlias={shlex.quote(host)}"),
            url=parsed.url() if parsed is not None else None,
            port=port,
        )
    assert parsed is not None  # git://
    return Pinned(url=parsed.url(str(addresses[0])), port=port)
