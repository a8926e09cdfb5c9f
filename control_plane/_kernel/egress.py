"""Egress: where a pack may connect, judged on the resolved address at connect time
(docs/grants.md).

The decision only: the address categories, the grant grammar, whether an address is
allowed. Resolving a name and connecting are the runtime's
(:mod:`control_plane._features.grants.connect`): core opens no socket.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, TypeAlias
from urllib.parse import urlsplit

from control_plane._kernel.errors import CapabilityPackError

__all__ = [
    "CATEGORIES",
    "DEFAULT_EGRESS",
    "Address",
    "EgressGrantError",
    "EgressPolicy",
    "EgressRefused",
    "Resolver",
    "allowed_addresses",
    "category",
    "curl_resolve",
    "egress_rule",
    "literal_address",
    "refuse_unresolved",
    "url_port",
]

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
#: ``(host, port) -> addresses``; the system's by default (the runtime's), a table in tests.
Resolver: TypeAlias = Callable[[str, int], Sequence[Address]]

#: Every category an address falls in; ``reserved`` is never granted by a word.
CATEGORIES: Final = ("public", "loopback", "private", "link-local", "metadata", "reserved")
_WORDS: Final = frozenset(CATEGORIES) - {"reserved"}
DEFAULT_EGRESS: Final = ("public",)

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

#: First match wins: metadata addresses sit inside link-local, private or public space
#: and must be granted by their word, ``metadata``: no other word and no network (a CIDR
#: grant of ``169.254.0.0/16`` or ``0.0.0.0/0``) covers them. Anything not listed is public.
_V4_TABLE: Final[tuple[tuple[ipaddress.IPv4Network, str], ...]] = (
    (_V4("169.254.169.254/32"), "metadata"),  # AWS, GCP, Azure IMDS, OpenStack, DO, Oracle
    (_V4("169.254.169.253/32"), "metadata"),  # AWS VPC DNS
    (_V4("169.254.170.2/32"), "metadata"),  # AWS ECS task credentials
    (_V4("169.254.170.23/32"), "metadata"),  # AWS EKS pod identity
    (_V4("169.254.0.23/32"), "metadata"),  # Tencent Cloud
    (_V4("100.100.100.200/32"), "metadata"),  # Alibaba Cloud
    (_V4("168.63.129.16/32"), "metadata"),  # Azure wire server
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("0.0.0.0/8"), "reserved"),  # "this network": connecting to 0.0.0.0 reaches this host
    (_V4("10.0.0.0/8"), "private"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("100.64.0.0/10"), "private"),  # carrier-grade NAT
    (_V4("169.254.0.0/16"), "link-local"),
    (_V4("192.0.0.0/24"), "reserved"),  # IETF protocol assignments
    (_V4("192.0.2.0/24"), "reserved"),  # documentation
    (_V4("198.51.100.0/24"), "reserved"),
    (_V4("203.0.113.0/24"), "reserved"),
    (_V4("198.18.0.0/15"), "reserved"),  # benchmarking
    (_V4("192.88.99.0/24"), "reserved"),  # 6to4 relay anycast
    (_V4("224.0.0.0/4"), "reserved"),  # multicast
    (_V4("240.0.0.0/4"), "reserved"),  # future use, broadcast
)
_V6_TABLE: Final[tuple[tuple[ipaddress.IPv6Network, str], ...]] = (
    (_V6("fd00:ec2::254/128"), "metadata"),  # AWS IMDS over IPv6
    (_V6("fd00:ec2::23/128"), "metadata"),  # AWS EKS pod identity
    (_V6("fd00:ec2::253/128"), "metadata"),  # AWS VPC DNS (169.254.169.253's twin)
    (_V6("fd20:ce::254/128"), "metadata"),  # Google Cloud metadata server over IPv6
    (_V6("::1/128"), "loopback"),
    (_V6("::/128"), "reserved"),  # unspecified
    (_V6("fe80::/10"), "link-local"),
    (_V6("fc00::/7"), "private"),  # unique local
    (_V6("fec0::/10"), "private"),  # site-local (deprecated)
    (_V6("64:ff9b:1::/48"), "private"),  # local-use NAT64
    (_V6("100::/64"), "reserved"),  # discard
    (_V6("2001::/23"), "reserved"),  # IETF assignments: Teredo, benchmarking, ORCHID
    (_V6("2001:db8::/32"), "reserved"),  # documentation
    (_V6("3fff::/20"), "reserved"),  # documentation
    (_V6("5f00::/16"), "reserved"),  # SRv6 SIDs
    (_V6("ff00::/8"), "reserved"),  # multicast
    (_V6("2000::/3"), "public"),  # global unicast
    (_V6("::/0"), "reserved"),  # everything else is unassigned
)
#: IPv6 ranges that carry an IPv4 address, and where: ``(network, shift)``, the IPv4
#: address being ``(int(address) >> shift) & 0xFFFFFFFF``.
_EMBEDDED_V4: Final[tuple[tuple[ipaddress.IPv6Network, int], ...]] = (
    (_V6("::ffff:0:0/96"), 0),  # IPv4-mapped
    (_V6("::ffff:0:0:0/96"), 0),  # IPv4-translated (SIIT)
    (_V6("64:ff9b::/96"), 0),  # NAT64
    (_V6("2002::/16"), 80),  # 6to4
    (_V6("::/96"), 0),  # IPv4-compatible (deprecated); :: and ::1 are judged as IPv6
)


def _ranges(
    table: Iterable[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str]],
) -> tuple[tuple[int, int, str], ...]:
    """The table as integer bounds: a lookup costs integer comparisons, not objects."""
    return tuple((int(n.network_address), int(n.broadcast_address), name) for n, name in table)


_V4_RANGES: Final = _ranges(_V4_TABLE)
_V6_RANGES: Final = _ranges(_V6_TABLE)
_EMBEDDED_RANGES: Final = tuple(
    (int(n.network_address), int(n.broadcast_address), shift) for n, shift in _EMBEDDED_V4
)


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    value = int(address)  # without a scope id
    if value <= 1:  # :: and ::1 are IPv6's own
        return None
    for low, high, shift in _EMBEDDED_RANGES:
        if low <= value <= high:
            return ipaddress.IPv4Address((value >> shift) & 0xFFFFFFFF)
    return None


_LOCAL_NAT64: Final = _V6("64:ff9b:1::/48")


def _bits(value: int, start: int, count: int) -> int:
    """``count`` bits of a 128-bit ``value`` from bit ``start`` (0: the leftmost)."""
    return (value >> (128 - start - count)) & ((1 << count) - 1)


def _local_nat64_v4(value: int) -> tuple[int, ...]:
    """The IPv4 addresses a local-use NAT64 address (RFC 8215) may carry: its translator's
    prefix may be /48, /56, /64 or /96, each placing the address differently (RFC 6052,
    bits 64-71 skipped)."""
    return (
        (_bits(value, 48, 16) << 16) | _bits(value, 72, 16),
        (_bits(value, 56, 8) << 24) | _bits(value, 72, 24),
        _bits(value, 72, 32),
        _bits(value, 96, 32),
    )


def category(address: Address) -> str:
    """The category of ``address``: one of :data:`CATEGORIES`."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_v4(address)
        if inner is not None:
            return category(inner)
        if address in _LOCAL_NAT64 and any(
            category(ipaddress.IPv4Address(v4)) == "metadata"
            for v4 in _local_nat64_v4(int(address))
        ):
            return "metadata"  # whichever prefix its translator uses, it may reach one
        ranges = _V6_RANGES
    else:
        ranges = _V4_RANGES
    value = int(address)
    for low, high, name in ranges:
        if low <= value <= high:
            return name
    return "public"


class EgressGrantError(CapabilityPackError, ValueError):
    """An egress grant entry that does not parse (an operator's mistake, said at load)."""


class EgressRefused(CapabilityPackError):
    """The grant does not allow this destination; nothing was sent to it."""

    def __init__(self, host: str, port: int, reason: str) -> None:
        self.host = host
        self.port = port
        self.reason = reason
        super().__init__(f"{_where(host, port)}: {reason}")


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(frozen=True)
class _Rule:
    """One entry: a category word, a network, or a host name (``*.`` for a suffix)."""

    word: str | None = None
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None
    host: str | None = None
    port: int | None = None

    def matches(self, host: str, port: int, address: Address, kind: str) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.word is not None:
            return self.word == kind
        if self.network is not None:
            if kind == "metadata":  # a network never covers them: only the word does
                return False
            bare = _bare(address)
            if bare.version != self.network.version:
                inner = _embedded_v4(bare) if isinstance(bare, ipaddress.IPv6Address) else None
                return inner is not None and inner in self.network
            return bare in self.network
        assert self.host is not None
        return kind == "public" and self.names(host)

    def may_admit(self, host: str, port: int) -> bool:
        """Whether an address of ``host`` could be admitted on ``port`` (a category or a
        network may hold any address: it cannot say before the name is resolved)."""
        if self.port is not None and self.port != port:
            return False
        return self.host is None or self.names(host)

    def names(self, host: str) -> bool:
        """Whether this host entry names ``host`` (``*.`` for a suffix)."""
        assert self.host is not None
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host


def _bare(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        return ipaddress.IPv6Address(int(address))
    return address


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise EgressGrantError(f"egress entry {entry!r}: {text!r} is not a port (1-65535)")
    return int(text)


def _network(text: str, entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise EgressGrantError(f"egress entry {entry!r}: {text!r} is not an address") from None


_HOST_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")


def egress_rule(entry: str) -> _Rule:
    """One egress entry parsed (:class:`EgressGrantError` when it is not one)."""
    return _rule(entry)


def _rule(entry: str) -> _Rule:
    text = entry.strip().lower()
    port: int | None = None
    if text.startswith("["):
        inside, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise EgressGrantError(f"egress entry {entry!r}: expected [IPv6]:port")
        return _Rule(network=_network(inside, entry), port=_port(rest[1:], entry) if rest else None)
    if text.count(":") > 1:
        return _Rule(network=_network(text, entry))  # a bare IPv6 address or network
    target, sep, port_text = text.partition(":")
    if sep:
        port = _port(port_text, entry)
    if target in _WORDS:
        return _Rule(word=target, port=port)
    if target == "reserved":
        raise EgressGrantError(f"egress entry {entry!r}: reserved ranges are granted by CIDR")
    if target and (target[0].isdigit() and all(c.isdigit() or c in "./" for c in target)):
        return _Rule(network=_network(target, entry), port=port)
    name = target.rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        raise EgressGrantError(
            f"egress entry {entry!r}: a name grants public addresses only; "
            "grant loopback with 'loopback' (or 'loopback:PORT')"
        )
    bare = name[2:] if name.startswith("*.") else name
    labels = bare.split(".")
    if not bare or not set(bare) <= _HOST_CHARS or any(not label for label in labels):
        raise EgressGrantError(
            f"egress entry {entry!r}: not a category ({', '.join(sorted(_WORDS))}), "
            "an address, a network or a host name"
        )
    return _Rule(host=name, port=port)


class EgressPolicy:
    """The destinations a pack may connect to (see the module docs for the grammar)."""

    __slots__ = ("_rules", "entries")

    def __init__(self, entries: Iterable[str] = DEFAULT_EGRESS) -> None:
        self.entries: tuple[str, ...] = tuple(entries)
        self._rules = tuple(_rule(entry) for entry in self.entries)

    def __repr__(self) -> str:
        return f"EgressPolicy({list(self.entries)!r})"

    def may_resolve(self, host: str, port: int) -> bool:
        """Whether some entry might admit an address of the name ``host`` on ``port``; if
        none can, a lookup would only carry the caller's text to a name server."""
        name = _name(host)
        return any(rule.may_admit(name, port) for rule in self._rules)

    def allows(self, host: str, port: int, address: Address) -> bool:
        """Whether connecting to ``address`` (resolved from ``host``) on ``port`` is granted."""
        name = _name(host)
        kind = category(address)
        return any(rule.matches(name, port, address, kind) for rule in self._rules)


def _name(host: str) -> str:
    """The host as grant entries spell it: lower case, no trailing dot, IDNA (punycode)."""
    name = host.strip("[]").lower().rstrip(".")
    if name.isascii():
        return name
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        return name  # matches no entry (entries are ASCII): refused unless an address rule


def literal_address(host: str) -> Address | None:
    """``host`` as an address when it is one (``[::1]`` too), else ``None``: a name."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def refuse_unresolved(host: str, port: int, policy: EgressPolicy) -> None:
    """Raise :class:`EgressRefused` when ``policy`` could admit no address of the name
    ``host`` on ``port`` (:meth:`EgressPolicy.may_resolve`): decided before any lookup."""
    if not policy.may_resolve(host, port):
        raise EgressRefused(
            host,
            port,
            "no egress entry of this pack admits this name on this port, which this pack is "
            "not granted (the name was not looked up)",
        )


def allowed_addresses(
    host: str, port: int, addresses: Sequence[Address], policy: EgressPolicy
) -> list[Address]:
    """The addresses ``host`` resolved to that ``policy`` allows on ``port``, in order.

    Raises :class:`EgressRefused` when it allows none of them (naming the first refused
    address's category, never the address, which may be the operator's secret). Resolving
    and connecting are the runtime's (``control_plane._features.grants.connect``): core decides.
    """
    allowed = [a for a in addresses if policy.allows(host, port, a)]
    if allowed or not addresses:
        return allowed
    kinds = sorted({category(a) for a in addresses})
    word = (
        " (granted only by the word 'metadata', never by a network)" if "metadata" in kinds else ""
    )
    raise EgressRefused(
        host,
        port,
        f"the destination is {' and '.join(kinds)}, which this pack is not granted{word}",
    )


def url_port(url: str) -> tuple[str, int]:
    """A URL's host and port (the scheme's default port when none is given)."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        raise EgressRefused("?", 0, "the URL names no host")
    try:
        return host, parts.port or _DEFAULT_PORTS.get(parts.scheme.lower(), 0)
    except ValueError:
        raise EgressRefused(host, 0, "the URL has an invalid port") from None


def curl_resolve(url: str, addresses: Sequence[Address]) -> str:
    """``HOST:PORT:ADDR[,ADDR]`` pinning ``url``'s host to checked addresses, for a tool
    built on libcurl (``git -c http.curloptResolve=...``, ``curl --resolve``): the tool then
    connects where the check looked, not where a second lookup points (DNS rebinding).
    Give the tool no redirects to follow (``-c http.followRedirects=false``): a redirect's
    host is not pinned."""
    host, port = url_port(url)
    pinned = ",".join(f"[{a}]" if a.version == 6 else str(a) for a in addresses)
    return f"{host}:{port}:{pinned}"


_DEFAULT_PORTS: Final = MappingProxyType(
    {"http": 80, "https": 443, "git": 9418, "ssh": 22, "ftp": 21}
)
