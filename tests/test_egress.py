"""The egress policy: the category table, the grant grammar, the check before the connect.

Nothing here sends a packet: addresses beyond loopback are judged by the pure functions or
reached through a test resolver and a connector spy that records every attempt.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket

import pytest

from control_plane._features.grants.connect import (
    check_destination,
    check_url,
    open_connection,
    system_resolver,
)
from control_plane._kernel.egress import (
    Address,
    EgressGrantError,
    EgressPolicy,
    EgressRefused,
    category,
    curl_resolve,
)

ip = ipaddress.ip_address

#: address -> category, every row written down by hand (not derived from ``ipaddress``).
TABLE = {
    "8.8.8.8": "public",
    "1.1.1.1": "public",
    "2606:4700:4700::1111": "public",
    "127.0.0.1": "loopback",
    "127.255.255.254": "loopback",
    "::1": "loopback",
    "0.0.0.0": "reserved",
    "0.1.2.3": "reserved",
    "::": "reserved",
    "10.0.0.1": "private",
    "172.16.0.1": "private",
    "172.31.255.255": "private",
    "172.32.0.1": "public",
    "192.168.1.1": "private",
    "100.64.0.1": "private",
    "100.127.255.255": "private",
    "100.128.0.1": "public",
    "fc00::1": "private",
    "fd12:3456::1": "private",
    "169.254.1.1": "link-local",
    "fe80::1": "link-local",
    "169.254.169.254": "metadata",
    "169.254.170.2": "metadata",
    "fd00:ec2::254": "metadata",
    "100.100.100.200": "metadata",
    "168.63.129.16": "metadata",
    "224.0.0.1": "reserved",
    "255.255.255.255": "reserved",
    "240.0.0.1": "reserved",
    "192.0.2.1": "reserved",
    "198.18.0.1": "reserved",
    "192.0.0.8": "reserved",
    "ff02::1": "reserved",
    "2001:db8::1": "reserved",
    "2001::1": "reserved",  # Teredo
    "100::1": "reserved",
    # IPv6 forms that carry an IPv4 address are judged by the IPv4 address.
    "::ffff:127.0.0.1": "loopback",
    "::ffff:169.254.169.254": "metadata",
    "::ffff:10.0.0.1": "private",
    "::ffff:8.8.8.8": "public",
    "::127.0.0.1": "loopback",  # IPv4-compatible
    "::ffff:0:127.0.0.1": "loopback",  # IPv4-translated
    "64:ff9b::7f00:1": "loopback",  # NAT64
    "64:ff9b::a9fe:a9fe": "metadata",
    "64:ff9b::808:808": "public",
    "2002:7f00:1::": "loopback",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1": "metadata",
    "2002:808:808::1": "public",
    "64:ff9b:1::1": "private",
    "fe80::1%1": "link-local",
}


@pytest.mark.parametrize(("text", "expected"), sorted(TABLE.items()))
def test_category_table(text: str, expected: str) -> None:
    assert category(ip(text)) == expected


class Resolver:
    """A resolver from a table; records every question."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[Address]:
        self.asked.append((host, port))
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "unknown")
        return [ip(a) for a in self.table[host]]


class Spy:
    """A connector that records and never connects."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    def __call__(self, address: Address, port: int, timeout: float) -> socket.socket:
        self.attempts.append((str(address), port))
        raise ConnectionRefusedError("spy")


def test_default_policy_refuses_every_non_public_category() -> None:
    policy = EgressPolicy()
    for text, kind in TABLE.items():
        assert policy.allows("h", 80, ip(text)) is (kind == "public"), text


@pytest.mark.parametrize(
    "spelling",
    ["localhost", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "127.1", "0", "0.0.0.0", "[::1]"],
)
def test_every_loopback_spelling_is_refused_by_the_system_resolver(spelling: str) -> None:
    # The system resolver (glibc inet_aton and /etc/hosts) answers these locally.
    with pytest.raises(EgressRefused) as caught:
        check_destination(spelling, 80, EgressPolicy())
    assert "loopback" in str(caught.value) or "reserved" in str(caught.value)


def test_literal_ipv6_forms_are_refused_without_asking_the_resolver() -> None:
    resolver = Resolver({})
    for host in ("[::ffff:127.0.0.1]", "::1", "[fd00:ec2::254]", "64:ff9b::7f00:1"):
        with pytest.raises(EgressRefused):
            check_destination(host, 80, EgressPolicy(), resolver)
    assert resolver.asked == []


def test_metadata_and_link_local_are_refused_before_any_connect() -> None:
    resolver = Resolver(
        {
            "imds.test": ["169.254.169.254"],
            "imds6.test": ["fd00:ec2::254"],
            "aliyun.test": ["100.100.100.200"],
            "ll.test": ["169.254.7.7"],
            "lan.test": ["192.168.0.10"],
        }
    )
    spy = Spy()
    for host in resolver.table:
        with pytest.raises(EgressRefused):
            open_connection(host, 80, EgressPolicy(), lambda: 1.0, resolver=resolver, connector=spy)
    assert spy.attempts == []
    # Even the link-local and private grants do not open the metadata addresses.
    wide = EgressPolicy(["public", "link-local", "private"])
    with pytest.raises(EgressRefused):
        open_connection("imds.test", 80, wide, lambda: 1.0, resolver=resolver, connector=spy)
    assert spy.attempts == []
    # The granted ones reach the connector.
    with pytest.raises(ConnectionRefusedError):
        open_connection("ll.test", 80, wide, lambda: 1.0, resolver=resolver, connector=spy)
    assert spy.attempts == [("169.254.7.7", 80)]


def test_a_mixed_answer_connects_only_to_the_checked_addresses() -> None:
    # DNS rebinding in one answer: the public address is used, the loopback one never.
    resolver = Resolver({"rebind.test": ["127.0.0.1", "93.184.216.34", "10.0.0.1"]})
    spy = Spy()
    with pytest.raises(ConnectionRefusedError):
        open_connection(
            "rebind.test", 443, EgressPolicy(), lambda: 1.0, resolver=resolver, connector=spy
        )
    assert spy.attempts == [("93.184.216.34", 443)]
    assert resolver.asked == [("rebind.test", 443)]  # resolved once


def test_grammar() -> None:
    policy = EgressPolicy(
        ["loopback:8080", "10.1.0.0/16", "[fd00:1::/32]:443", "api.example.com:443", "*.corp.test"]
    )
    assert policy.allows("x", 8080, ip("127.0.0.1"))
    assert not policy.allows("x", 8081, ip("127.0.0.1"))
    assert policy.allows("x", 1, ip("10.1.2.3"))
    assert policy.allows("x", 1, ip("::ffff:10.1.2.3"))  # the same host, mapped
    assert not policy.allows("x", 1, ip("10.2.0.1"))
    assert policy.allows("x", 443, ip("fd00:1::5"))
    assert not policy.allows("x", 80, ip("fd00:1::5"))
    assert policy.allows("API.example.com.", 443, ip("8.8.8.8"))
    assert not policy.allows("api.example.com", 80, ip("8.8.8.8"))
    assert not policy.allows("evil.test", 443, ip("8.8.8.8"))  # no "public": names only
    assert policy.allows("a.corp.test", 1, ip("8.8.4.4"))
    assert EgressPolicy(["xn--bcher-kva.test"]).allows("BÜCHER.test", 1, ip("8.8.4.4"))
    assert not policy.allows("corp.test", 1, ip("8.8.4.4"))
    # A name never vouches for its own address: api.example.com resolving to a private
    # address is refused unless the address is granted too.
    assert not policy.allows("api.example.com", 443, ip("192.168.1.1"))
    assert not policy.allows("api.example.com", 443, ip("169.254.169.254"))


@pytest.mark.parametrize(
    "entry",
    [
        *("", "reserved", "loopback:0", "loopback:99999", "10.0.0.0/33", "[::1", "a..b"),
        *("h_x", "localhost:8080", "localhost"),
    ],
)
def test_grammar_errors_name_the_entry(entry: str) -> None:
    with pytest.raises(EgressGrantError) as caught:
        EgressPolicy([entry])
    assert repr(entry) in str(caught.value)


def test_check_url_for_other_schemes() -> None:
    resolver = Resolver({"git.test": ["10.0.0.5"], "pub.test": ["8.8.8.8"]})
    with pytest.raises(EgressRefused) as caught:
        check_url("git://git.test/repo.git", EgressPolicy(), resolver)
    assert caught.value.port == 9418 and "private" in str(caught.value)
    assert check_url("https://pub.test/x", EgressPolicy(), resolver) == [ip("8.8.8.8")]
    assert resolver.asked[-1] == ("pub.test", 443)
    with pytest.raises(EgressRefused):
        check_url("file:///etc/passwd", EgressPolicy(), resolver)


def test_curl_resolve_pins_the_checked_addresses() -> None:
    resolver = Resolver({"git.test": ["8.8.8.8", "2001:4860:4860::8888"]})
    url = "https://user@git.test/org/repo.git"
    pinned = curl_resolve(url, check_url(url, EgressPolicy(), resolver))
    assert pinned == "git.test:443:8.8.8.8,[2001:4860:4860::8888]"
    assert curl_resolve("http://git.test:8080/x", [ip("8.8.4.4")]) == "git.test:8080:8.8.4.4"
    with pytest.raises(EgressRefused):
        check_url("git@git.test:org/repo.git", EgressPolicy(), resolver)  # scp-like: no host


def test_system_resolver_answers_loopback_names_locally() -> None:
    assert ip("127.0.0.1") in system_resolver("localhost", 80) or ip("::1") in system_resolver(
        "localhost", 80
    )


#: Metadata addresses the attack pass found granted by ``private``, ``link-local`` or a
#: network: Google Cloud's IPv6 metadata server, AWS's IPv6 DNS (the twin of
#: 169.254.169.253), Tencent Cloud's metadata server, and 169.254.169.254 behind a
#: local-use NAT64 translator (RFC 8215's 64:ff9b:1::/48, in each RFC 6052 layout).
MISSED_METADATA = [
    "fd20:ce::254",
    "fd00:ec2::253",
    "169.254.0.23",
    "64:ff9b:1::a9fe:a9fe",  # /96 layout
    "64:ff9b:1:0:a9:fea9:fe00:0",  # /64 layout: bits 72-103, the u-octet 0
    "64:ff9b:1:a9:fe:a9fe::",  # /56 layout: 8 bits, the u-octet, 24 bits
    "64:ff9b:1:a9fe:a9:fe00::",  # /48 layout: 16 bits, the u-octet, 16 bits
]


@pytest.mark.parametrize("text", MISSED_METADATA)
def test_metadata_addresses_need_their_word_in_every_spelling(text: str) -> None:
    resolver = Resolver({"imds.test": [text]})
    spy = Spy()
    for grant in (["public", "private", "link-local", "loopback"], ["0.0.0.0/0", "::/0"]):
        with pytest.raises(EgressRefused, match="metadata"):
            open_connection(
                "imds.test", 80, EgressPolicy(grant), lambda: 1.0, resolver=resolver, connector=spy
            )
    assert spy.attempts == []
    assert category(ip(text)) == "metadata"
    granted = EgressPolicy(["metadata"])
    with pytest.raises(ConnectionRefusedError):
        open_connection("imds.test", 80, granted, lambda: 1.0, resolver=resolver, connector=spy)
    assert spy.attempts == [(text, 80)]


def test_local_use_nat64_of_an_ordinary_address_stays_private() -> None:
    assert category(ip("64:ff9b:1::a00:1")) == "private"
    assert category(ip("64:ff9b:1::1")) == "private"


#: Grants under which no address a name could resolve to is ever allowed for the name and
#: port asked: resolving it would only send the caller's text to a DNS server (a lookup
#: of ``<secret>.attacker.example`` is a message to the attacker's name server).
NO_NAME_GRANTS = [
    ((), "exfil.test", 80),  # nothing granted
    (("public:443",), "exfil.test", 80),  # another port
    (("loopback:8080", "10.0.0.0/8:22"), "exfil.test", 80),  # no entry on this port
    (("api.test",), "exfil.test", 443),  # another name
    (("*.api.test",), "api.test.exfil.test", 443),  # not under the suffix
    (("api.test:443",), "api.test", 80),  # the name, another port
]


@pytest.mark.parametrize(("grant", "host", "port"), NO_NAME_GRANTS)
def test_a_name_no_grant_entry_can_admit_is_refused_before_it_is_resolved(
    grant: tuple[str, ...], host: str, port: int
) -> None:
    resolver = Resolver({host: ["93.184.216.34"]})
    spy = Spy()
    with pytest.raises(EgressRefused, match="not granted"):
        open_connection(
            host, port, EgressPolicy(grant), lambda: 1.0, resolver=resolver, connector=spy
        )
    with pytest.raises(EgressRefused, match="not granted"):
        check_url(f"https://{host}:{port}/x", EgressPolicy(grant), resolver)
    assert resolver.asked == []
    assert spy.attempts == []


@pytest.mark.parametrize(
    ("grant", "host", "port"),
    [
        (("public",), "pub.test", 80),
        (("private:80",), "pub.test", 80),  # a category: the name may resolve into it
        (("10.0.0.0/8",), "pub.test", 80),
        (("pub.test:80",), "pub.test", 80),
        (("*.test",), "pub.test", 80),
        (("PUB.test.",), "pub.test.", 80),  # spelled differently, the same name
    ],
)
def test_a_name_some_entry_may_admit_is_still_resolved(
    grant: tuple[str, ...], host: str, port: int
) -> None:
    resolver = Resolver({host: ["8.8.8.8"]})
    with contextlib.suppress(EgressRefused):  # a category or network decides on the address
        check_destination(host, port, EgressPolicy(grant), resolver)
    assert resolver.asked == [(host, port)]
