"""aiomcache (aio-libs' asyncio memcached client, text protocol) against a real memcached
(Debian's ``memcached``): one server as deployed (8 MiB, 1 MiB items), one started with
``-M -m 2`` whose memory is filled (it answers ``SERVER_ERROR out of memory`` instead of
evicting). aiomcache raises ``ValidationException``
for the caller's bad keys and values before sending, ``ClientException`` with the server's
reply for an answer it did not expect; the transport's ``OSError`` passes through; it has no
timeout of its own, so the pack bounds a call with ``asyncio.wait_for``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
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
    run_async,
    served,
)
from corpus_live.servers import memcached


@dataclass
class Memcached:
    port: int
    full_port: int  # -M -m 2: no eviction, its memory filled


def _start(stack: contextlib.ExitStack, work: Path) -> Memcached:
    port = memcached(stack, work)
    full = memcached(stack, work, "-m", "2", "-M")

    async def fill() -> None:
        import aiomcache

        client = aiomcache.Client(LOOPBACK, full)
        try:
            blob = b"x" * 400_000
            for i in range(64):
                try:
                    await client.set(f"fill{i}".encode(), blob)
                except aiomcache.exceptions.ClientException:
                    return  # out of memory: full
        finally:
            await client.close()

    run_async(fill())
    return Memcached(port, full)


Ctx = Served[Memcached]

FAM = family(
    "aiomcache",
    "memcached (Debian), real",
    served(_start),
    half="heldout7",
)


def _do(
    op: Callable[[Any], Awaitable[Any]],
    port: Callable[[Ctx], int] | None = None,
    host: str = LOOPBACK,
    bound: float = 1.5,
) -> Callable[[Ctx], None]:
    async def go(c: Ctx) -> None:
        import aiomcache

        client = aiomcache.Client(host, c.server.port if port is None else port(c))
        try:
            await asyncio.wait_for(op(client), bound)
        finally:
            await client.close()

    return lambda c: run_async(go(c))


async def _incr_text(client: Any) -> None:
    await client.set(b"greeting", b"hello")
    await client.incr(b"greeting", 1)


FAM.add(
    "key_too_long",
    INT,
    "ValidationException: a 300-byte key (memcached's limit is 250)",
    _do(lambda c: c.get(b"k" * 300)),
)
FAM.add(
    "key_with_space",
    INT,
    "ValidationException: invalid key (a space in it)",
    _do(lambda c: c.set(b"bad key", b"v")),
)
FAM.add(
    "key_not_bytes",
    INT,
    "ValidationException: key must be bytes (the pack passed str)",
    _do(lambda c: c.get("plain-str")),
)
FAM.add(
    "exptime_negative",
    INT,
    "ValidationException: exptime negative",
    _do(lambda c: c.set(b"k", b"v", exptime=-5)),
)
FAM.add(
    "value_not_bytes",
    INT,
    "ValidationException: flag handler must be set for non-byte values (a dict)",
    _do(lambda c: c.set(b"k", {"a": 1})),
)
FAM.add(
    "object_too_large",
    INT,
    "SERVER_ERROR object too large for cache (a 2 MiB value, 1 MiB item limit)",
    _do(lambda c: c.set(b"big", b"x" * (2 << 20))),
)
FAM.add(
    "out_of_memory",
    QUOTA,
    "SERVER_ERROR out of memory storing object (-M: memory full, no eviction)",
    _do(lambda c: c.set(b"one-more", b"y" * 400_000), port=lambda c: c.server.full_port),
)
FAM.add(
    "incr_missing",
    NF,
    "incr of a key that does not exist: NOT_FOUND",
    _do(lambda c: c.incr(b"no-such-counter", 1)),
)
FAM.add(
    "incr_non_numeric",
    INT,
    "CLIENT_ERROR cannot increment or decrement non-numeric value",
    _do(_incr_text),
)
FAM.add(
    "refused",
    NET,
    "ConnectionRefusedError: nothing listens",
    _do(lambda c: c.get(b"k"), port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "socket.gaierror: host does not resolve (.invalid)",
    _do(lambda c: c.get(b"k"), port=lambda c: 11211, host=UNRESOLVABLE),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: the pack's 1 s asyncio.wait_for fires",
    _do(lambda c: c.get(b"k"), port=lambda c: c.net.silent, bound=1.0),
)
FAM.add(
    "dropped",
    NET,
    "the peer closes at once: end of stream before a reply",
    _do(lambda c: c.get(b"k"), port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | INT,
    "the peer answers bytes of no protocol, then closes",
    _do(lambda c: c.get(b"k"), port=lambda c: c.net.garbage),
)
