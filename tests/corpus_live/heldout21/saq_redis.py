"""saq (Simple Async Queue, its Redis queue ``saq.queue.redis.RedisQueue``) against real Redis
servers (Debian's ``redis-server``, ``heldout3._daemons.redis_streams``: an ACL server with
users ``app`` (all) and ``reader`` (reads only) and the default user off; one with
``maxmemory 1`` and ``noeviction``; a replica whose primary is down and that serves no stale
data). The pack builds the queue on a ``redis.asyncio`` client with 1 s socket timeouts and
enqueues jobs (saq's Lua scripts) or waits for one with ``apply(timeout=...)``. The errors are
redis-py's (``AuthenticationError``, ``NoPermissionError``, ``ResponseError``...) raised through
saq, and saq's own ``InvalidUrlError`` and ``asyncio.TimeoutError``. Nothing is faked but the
transport failures."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from corpus_live.core import (
    AUTH,
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
from corpus_live.heldout3._daemons import RedisStreams, redis_streams

Ctx = Served[RedisStreams]

FAM = family(
    "saq",
    "saq's RedisQueue against redis-server (Debian), real",
    served(redis_streams),
    half="heldout21",
)


def _url(port: int, user: str | None = "app", password: str = "app-pw", db: int = 0) -> str:
    cred = f"{user}:{password}@" if user else ""
    return f"redis://{cred}{LOOPBACK}:{port}/{db}"


def _do(
    url: Callable[[Ctx], str],
    op: Callable[[Any], Awaitable[Any]] | None = None,
    name: str = "default",
) -> Callable[[Ctx], Any]:
    def run(c: Ctx) -> Any:
        async def go() -> Any:
            from redis import asyncio as aioredis
            from saq.queue.redis import RedisQueue  # type: ignore[import-untyped]

            client = aioredis.from_url(url(c), socket_timeout=1.0, socket_connect_timeout=1.0)
            queue = RedisQueue(client, name=name)
            try:
                if op is None:
                    return await queue.enqueue("send_report", report_id=7)
                return await op(queue)
            finally:
                await client.aclose()

        return run_async(go())

    return run


async def _wrongtype(queue: Any) -> Any:
    await queue.redis.set(queue._incomplete, "not a sorted set")
    return await queue.enqueue("send_report", report_id=7)


async def _apply(queue: Any) -> Any:
    return await queue.apply("send_report", timeout=1, poll_interval=0.2, report_id=7)


FAM.add(
    "wrong_password",
    AUTH,
    "WRONGPASS invalid username-password pair or user is disabled",
    _do(lambda c: _url(c.server.port, password="wrong-pw")),
)
FAM.add(
    "no_credentials",
    AUTH,
    "the default user is off: HELLO must be called with the client already authenticated",
    _do(lambda c: _url(c.server.port, user=None)),
)
FAM.add(
    "reader_cannot_enqueue",
    AUTH,
    "NOPERM: user reader has no permission to run the scripts and writes of enqueue",
    _do(lambda c: _url(c.server.port, "reader", "reader-pw")),
)
FAM.add(
    "out_of_memory",
    QUOTA | INT,
    "OOM command not allowed when used memory > 'maxmemory' (noeviction)",
    _do(lambda c: _url(c.server.full_port, user=None)),
)
FAM.add(
    "replica_stale",
    NET | INT,
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'",
    _do(lambda c: _url(c.server.replica_port, user=None)),
)
FAM.add(
    "db_out_of_range",
    INT | NF,
    "ERR DB index is out of range: the pack's URL names database 99 of 16",
    _do(lambda c: _url(c.server.port, db=99)),
)
FAM.add(
    "wrong_type",
    INT,
    "WRONGTYPE Operation against a key holding the wrong kind of value: the queue's "
    "incomplete set is a string",
    _do(lambda c: _url(c.server.port), _wrongtype, name="clobbered"),
)
FAM.add(
    "apply_timeout",
    TO,
    "apply(timeout=1) and no worker serves the queue: the job's result never comes",
    _do(lambda c: _url(c.server.port), _apply, name="unserved"),
)


@FAM.case("bad_url", INT, "saq's Queue.from_url on a scheme it does not know: Invalid url")
def _bad_url(c: Ctx) -> Any:
    from saq import Queue  # type: ignore[import-untyped]

    return Queue.from_url(f"amqp://{LOOPBACK}:{c.server.port}")


FAM.add(
    "refused",
    NET,
    "nothing listens",
    _do(lambda c: _url(c.net.closed)),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _do(lambda c: f"redis://app:app-pw@{UNRESOLVABLE}:6379/0"),
)
FAM.add(
    "silent",
    TO,
    "server never answers: the 1 s socket timeout",
    _do(lambda c: _url(c.net.silent)),
)
FAM.add(
    "dropped",
    NET,
    "closed at once: Connection closed by server",
    _do(lambda c: _url(c.net.close_now)),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes of no protocol",
    _do(lambda c: _url(c.net.garbage)),
)
