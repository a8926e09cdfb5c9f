"""pymemcache against a real memcached (Debian's memcached) on loopback."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import INT, LOOPBACK, NET, Net, family, net, transport_cases
from corpus_live.servers import memcached


@dataclass
class Ctx:
    port: int
    tiny: int  # items over 1 MiB (the default -I) are refused
    net: Net


def _setup(stack: contextlib.ExitStack, work: Path) -> Ctx:
    port = memcached(stack, work)
    return Ctx(port, port, net(stack))


FAM = family("pymemcache", "memcached 1.6 (Debian memcached), real", _setup, half="visible")


def _client(port: int, host: str = LOOPBACK, **kw: Any) -> Any:
    from pymemcache.client.base import Client

    return Client((host, port), connect_timeout=1, timeout=1, **kw)


transport_cases(FAM, lambda host, port: _client(port, host).get("k"), dns_port=80)
FAM.add(
    "garbage", NET | INT, "not the memcached protocol", lambda c: _client(c.net.garbage).get("k")
)
FAM.add(
    "too_large",
    INT,
    "SERVER_ERROR object too large for cache",
    lambda c: _client(c.tiny).set("k", b"x" * (2 * 1024 * 1024), noreply=False),
)
FAM.add(
    "bad_key",
    INT,
    "a key with a space: the pack's bug",
    lambda c: _client(c.port).set("bad key", b"v", noreply=False),
)
FAM.add(
    "incr_non_numeric",
    INT,
    "CLIENT_ERROR cannot increment non-numeric value",
    lambda c: (_client(c.port).set("n", b"abc", noreply=False), _client(c.port).incr("n", 1)),
)
FAM.add("key_too_long", INT, "key longer than 250 bytes", lambda c: _client(c.port).get("k" * 300))
