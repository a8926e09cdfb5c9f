"""emcache (an asyncio memcached client with its own connection pool and per-operation
``timeout``) against a real memcached (Debian's ``memcached``): one plain server, one started
with ``-M`` and 2 MiB of memory (out of memory instead of evicting), one with ASCII
authentication (``-Y``). The failures are emcache's own exceptions for the server's
``NOT_STORED``/``NOT_FOUND``/``EXISTS``/``CLIENT_ERROR``/``SERVER_ERROR`` replies, its own
checks of keys and flags, and its operation timeout when its pool has no connection to give.
Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
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
class Memcacheds:
    port: int
    full_port: int
    auth_port: int


def _start(stack: contextlib.ExitStack, work: Path) -> Memcacheds:
    import emcache  # noqa: F401 - skip cleanly when missing

    auth = work / "auth"
    auth.write_text("app:app-pw\n")
    return Memcacheds(
        memcached(stack, work),
        memcached(stack, work, "-M", "-m", "2"),
        memcached(stack, work, "-Y", str(auth)),
    )


Ctx = Served[Memcacheds]

FAM = family(
    "emcache",
    "emcache against memcached (Debian), real",
    served(_start),
    half="heldout9",
)


def _with(
    port: Callable[[Ctx], int],
    body: Callable[[Any], Awaitable[Any]],
    *,
    host: str = LOOPBACK,
    username: str | None = None,
    password: str | None = None,
) -> Callable[[Ctx], Any]:
    async def go(c: Ctx) -> Any:
        import emcache

        client = await emcache.create_client(
            [emcache.MemcachedHostAddress(host, port(c))],
            timeout=1.0,
            connection_timeout=0.5,
            username=username,
            password=password,
        )
        try:
            return await body(client)
        finally:
            await client.close()

    return lambda c: run_async(go(c))


def _main(c: Ctx) -> int:
    return c.server.port


async def _add_twice(cl: Any) -> None:
    await cl.set(b"add:k", b"1")
    await cl.add(b"add:k", b"2")


async def _replace_missing(cl: Any) -> None:
    await cl.replace(b"replace:ghost", b"v")


async def _cas_stale(cl: Any) -> None:
    await cl.set(b"cas:k", b"1")
    item = await cl.gets(b"cas:k", return_flags=False)
    await cl.set(b"cas:k", b"changed by another writer")
    await cl.cas(b"cas:k", b"3", item.cas)


async def _cas_missing(cl: Any) -> None:
    await cl.cas(b"cas:ghost", b"3", 12345)


async def _incr_missing(cl: Any) -> None:
    await cl.increment(b"incr:ghost", 1)


async def _incr_text(cl: Any) -> None:
    await cl.set(b"incr:text", b"abc")
    await cl.increment(b"incr:text", 1)


async def _too_large(cl: Any) -> None:
    await cl.set(b"big", b"x" * (2 * 1024 * 1024))


async def _fill(cl: Any) -> None:
    blob = b"x" * 500_000
    for i in range(20):
        await cl.set(f"fill:{i}".encode(), blob)


async def _bad_key(cl: Any) -> None:
    await cl.set(b"a key with spaces", b"v")


async def _bad_flags(cl: Any) -> None:
    await cl.set(b"flags:k", b"v", flags=2**40)


async def _get(cl: Any) -> Any:
    return await cl.get(b"k")


FAM.add("add_exists", EXISTS, "add of a key that is stored: NOT_STORED", _with(_main, _add_twice))
FAM.add(
    "replace_missing",
    NF,
    "replace of a key that is not stored: NOT_STORED",
    _with(_main, _replace_missing),
)
FAM.add(
    "cas_conflict",
    EXISTS | INT,
    "cas with a stale token: another writer changed the key (EXISTS)",
    _with(_main, _cas_stale),
)
FAM.add("cas_missing", NF, "cas of a key that is not stored: NOT_FOUND", _with(_main, _cas_missing))
FAM.add("incr_missing", NF, "incr of a key that is not stored", _with(_main, _incr_missing))
FAM.add(
    "incr_not_number",
    INT,
    "incr of a non-numeric value: CLIENT_ERROR",
    _with(_main, _incr_text),
)
FAM.add(
    "item_too_large",
    INT | QUOTA,
    "a 2 MiB value over the 1 MiB item size: SERVER_ERROR object too large",
    _with(_main, _too_large),
)
FAM.add(
    "out_of_memory",
    QUOTA,
    "-M with 2 MiB: SERVER_ERROR out of memory storing object",
    _with(lambda c: c.server.full_port, _fill),
)
FAM.add("bad_key", INT, "emcache's own key check: a key with spaces", _with(_main, _bad_key))
FAM.add("bad_flags", INT, "emcache's own check: flags over 32 bits", _with(_main, _bad_flags))
FAM.add(
    "wrong_password",
    AUTH,
    "ASCII auth with a wrong password: CLIENT_ERROR authentication failure",
    _with(lambda c: c.server.auth_port, _get, username="app", password="nope"),
)
FAM.add("refused", NET | TO, "nothing listens", _with(lambda c: c.net.closed, _get))
FAM.add(
    "dns",
    NET | TO,
    "host does not resolve",
    _with(lambda c: 11211, _get, host=UNRESOLVABLE),
)
FAM.add("silent", TO, "the server never answers", _with(lambda c: c.net.silent, _get))
FAM.add("dropped", NET | TO, "closed at once", _with(lambda c: c.net.close_now, _get))
