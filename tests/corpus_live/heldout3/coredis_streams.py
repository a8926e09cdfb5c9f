"""coredis (an async Redis client) using Redis streams as a work queue against a real Redis 7
(Debian's ``redis-server``): the server's error prefixes (``WRONGPASS``, ``NOPERM``,
``NOGROUP``, ``BUSYGROUP``, ``OOM``, ``READONLY``, ``MASTERDOWN``) as coredis's classes. The
client is used the way coredis 6 documents it (``async with client:``, an anyio task group),
so each failure reaches the pack inside an ``ExceptionGroup``."""

from __future__ import annotations

import contextlib
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
    served,
)
from corpus_live.heldout3._daemons import RedisStreams, redis_streams

Ctx = Served[RedisStreams]

FAM = family("coredis", "Redis 7 (Debian), real", served(redis_streams), half="heldout3")


def _client(
    port: int, user: str | None = "app", password: str | None = "app-pw", host: str = LOOPBACK
) -> Any:
    import coredis
    from coredis.retry import NoRetryPolicy

    return coredis.Redis(
        host,
        port,
        username=user,
        password=password,
        connect_timeout=1,
        stream_timeout=1,
        decode_responses=True,
        retry_policy=NoRetryPolicy(),
    )


def _on(op: Any, port: Any = None, **kw: Any) -> Any:
    async def run(c: Ctx) -> Any:
        client = _client(port(c) if port else c.server.port, **kw)
        async with client:
            return await op(client)

    return run


async def _nogroup(r: Any) -> Any:
    await r.xadd("jobs", {"task": "resize"})
    return await r.xreadgroup("workers", "w1", count=1, streams={"jobs": ">"})


async def _busygroup(r: Any) -> Any:
    await r.xadd("orders", {"id": "1"})
    from coredis.exceptions import StreamDuplicateConsumerGroupError

    with contextlib.suppress(StreamDuplicateConsumerGroupError):  # the first run creates it
        await r.xgroup_create("orders", "billing", identifier="0")
    return await r.xgroup_create("orders", "billing", identifier="0")


async def _stale_id(r: Any) -> Any:
    await r.xadd("events", {"e": "x"}, identifier="5-0")
    return await r.xadd("events", {"e": "y"}, identifier="3-0")


async def _wrongtype(r: Any) -> Any:
    await r.xadd("audit", {"a": "1"})
    return await r.lpush("audit", ["x"])


FAM.add(
    "wrong_password",
    AUTH,
    "WRONGPASS invalid username-password pair",
    _on(lambda r: r.ping(), password="wrong-pw"),
)
FAM.add(
    "no_auth",
    AUTH,
    "NOAUTH: the default user is off and no credentials were given",
    _on(lambda r: r.ping(), user=None, password=None),
)
FAM.add(
    "noperm",
    AUTH,
    "NOPERM: the reader may not run XADD",
    _on(lambda r: r.xadd("jobs", {"t": "x"}), user="reader", password="reader-pw"),
)
FAM.add("nogroup", NF, "NOGROUP: no such consumer group for XREADGROUP", _on(_nogroup))
FAM.add("busygroup", EXISTS, "BUSYGROUP Consumer Group name already exists", _on(_busygroup))
FAM.add(
    "stale_id",
    INT,
    "ERR the ID specified in XADD is equal or smaller than the stream's top item",
    _on(_stale_id),
)
FAM.add(
    "wrongtype",
    INT,
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    _on(_wrongtype),
)
FAM.add(
    "oom",
    QUOTA | INT,
    "OOM command not allowed when used memory > 'maxmemory': the server's memory limit",
    _on(
        lambda r: r.xadd("jobs", {"t": "x"}),
        port=lambda c: c.server.full_port,
        user=None,
        password=None,
    ),
)
FAM.add(
    "readonly_replica",
    INT,
    "READONLY You can't write against a read only replica (the pack's endpoint is wrong)",
    _on(
        lambda r: r.xadd("jobs", {"t": "x"}),
        port=lambda c: c.server.replica_port,
        user=None,
        password=None,
    ),
)
FAM.add(
    "masterdown",
    NET,
    "MASTERDOWN Link with MASTER is down: the replica waits for its primary",
    _on(lambda r: r.xlen("jobs"), port=lambda c: c.server.replica_port, user=None, password=None),
)


def _transport(port: Any, host: str = LOOPBACK) -> Any:
    async def run(c: Ctx) -> Any:
        async with _client(port(c), host=host) as r:
            return await r.ping()

    return run


FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 6379, UNRESOLVABLE))
FAM.add(
    "silent",
    TO | NET,
    "no reply to HELLO (timeouts 1 s): a ConnectionError caused by a timeout",
    _transport(lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed at once", _transport(lambda c: c.net.close_now))
