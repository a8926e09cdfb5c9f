"""pylibmc (libmemcached's Python binding, the text protocol) against real memcached servers
(Debian's ``memcached``): one with room, one started with ``-M`` and 2 MiB of memory (it
answers out of memory instead of evicting). pylibmc raises one class per libmemcached return
code; its ``get`` hides transport failures (a miss), so the cases write."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import (
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.servers import memcached


@dataclass
class Memcached:
    port: int
    full_port: int  # -m 2 -M: out of memory rather than evict


def _start(stack: contextlib.ExitStack, work: Path) -> Memcached:
    return Memcached(memcached(stack, work), memcached(stack, work, "-m", "2", "-M"))


FAM = family(
    "pylibmc",
    "pylibmc against memcached (Debian), real",
    served(_start),
    half="heldout19",
)

Ctx = Served[Memcached]

_BEHAVIORS = {
    "connect_timeout": 1000,
    "receive_timeout": 1_000_000,
    "send_timeout": 1_000_000,
    "_poll_timeout": 1000,
}


def _client(port: int, host: str = LOOPBACK, **kw: Any) -> Any:
    import pylibmc  # type: ignore[import-untyped]

    return pylibmc.Client([f"{host}:{port}"], behaviors=dict(_BEHAVIORS, **kw))


@FAM.case("incr_missing", NF, "incr of a counter that was never set: NOT_FOUND")
def _incr_missing(c: Ctx) -> Any:
    return _client(c.server.port).incr("counter:never-set")


@FAM.case(
    "incr_not_numeric",
    INT,
    "incr of a value that is not a number: CLIENT_ERROR cannot increment non-numeric value",
)
def _incr_text(c: Ctx) -> Any:
    mc = _client(c.server.port)
    mc.set("counter:text", "abc")
    return mc.incr("counter:text")


@FAM.case("too_big", INT, "a 2 MB value over memcached's 1 MB item size limit")
def _too_big(c: Ctx) -> Any:
    return _client(c.server.port).set("blob:big", b"x" * 2_000_000)


@FAM.case("key_too_long", INT, "the pack's key is over the 250-byte key limit")
def _key_too_long(c: Ctx) -> Any:
    return _client(c.server.port).get("k" * 300)


@FAM.case("unpicklable", INT, "the pack stores an object that cannot be pickled")
def _unpicklable(c: Ctx) -> Any:
    return _client(c.server.port).set("obj", lambda: 1)


@FAM.case("cas_off", INT, "cas called on a client made without the cas behavior")
def _cas_off(c: Ctx) -> Any:
    return _client(c.server.port).cas("k", "v", 1)


@FAM.case(
    "out_of_memory",
    QUOTA | INT,
    "-M server with 2 MiB full: SERVER_ERROR out of memory storing object",
)
def _out_of_memory(c: Ctx) -> Any:
    mc = _client(c.server.full_port)
    for i in range(100):
        mc.set(f"fill:{i}", b"z" * 100_000)


@FAM.case("refused", NET, "nothing listens")
def _refused(c: Ctx) -> Any:
    return _client(c.net.closed).set("k", "v")


@FAM.case("dns", NET, "host does not resolve")
def _dns(c: Ctx) -> Any:
    return _client(11211, host=UNRESOLVABLE).set("k", "v")


@FAM.case("silent", TO, "server never answers: libmemcached's poll timeout")
def _silent(c: Ctx) -> Any:
    return _client(c.net.silent).set("k", "v")


@FAM.case("dropped", NET, "closed at once")
def _dropped(c: Ctx) -> Any:
    return _client(c.net.close_now).set("k", "v")


@FAM.case("garbage", NET, "the peer answers bytes of no protocol: UNKNOWN READ FAILURE")
def _garbage(c: Ctx) -> Any:
    return _client(c.net.garbage).set("k", "v")
