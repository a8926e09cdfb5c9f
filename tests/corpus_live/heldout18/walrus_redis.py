"""walrus (Redis utilities: models, rate limits, locks, containers, consumer groups) against
real Redis 7 servers (Debian's ``redis-server``): ACL users (``app`` may do everything,
``reader`` only read; the default user is off), a server whose ``maxmemory`` refuses every
write, a read-only replica whose primary is down. Nothing is faked but the transport
failures. walrus's own exceptions (``RateLimitException``, ``KeyError`` for a missing model,
``ValueError``/``RuntimeError`` from its helpers) and redis-py's errors pass through."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout3._daemons import RedisStreams, redis_streams

Ctx = Served[RedisStreams]

FAM = family(
    "walrus",
    "Redis 7 (Debian redis-server), real",
    served(redis_streams),
    half="heldout18",
)


def _db(port: int, *, user: str = "app", password: str = "app-pw", host: str = LOOPBACK) -> Any:
    from redis.backoff import NoBackoff
    from redis.retry import Retry
    from walrus import Database  # type: ignore[import-untyped]

    return Database(
        host=host,
        port=port,
        username=user,
        password=password,
        socket_timeout=1,
        socket_connect_timeout=1,
        retry=Retry(NoBackoff(), 0),  # the pack fails fast: its caller decides on retries
    )


def _ns() -> str:
    return f"inv-{os.urandom(4).hex()}"  # keys of its own: runs twice leave no trace


def _write(
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        db = _db(port(c), user=user, password=password, host=host)
        stock = db.Hash(f"{_ns()}:stock")
        stock.update(sku_123="4", sku_456="0")

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "WRONGPASS invalid username-password pair",
    _write(password="not-it"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "WRONGPASS: no such ACL user",
    _write(user="ops", password="ops-pw"),
)
FAM.add(
    "read_only_user",
    AUTH,
    "NOPERM: the reader ACL user may not write the hash",
    _write(user="reader", password="reader-pw"),
)
FAM.add(
    "out_of_memory",
    QUOTA,
    "OOM command not allowed when used memory > 'maxmemory' (noeviction)",
    _write(lambda c: c.server.full_port, user="default", password=""),
)
FAM.add(
    "read_only_replica",
    NET | INT,
    "READONLY: the address is a replica (its primary down), it refuses writes",
    _write(lambda c: c.server.replica_port, user="default", password=""),
)


def _model(db: Any) -> Any:
    from walrus import Model, TextField

    class Customer(Model):  # type: ignore[misc]
        __database__ = db
        __namespace__ = _ns()
        email = TextField(primary_key=True)
        plan = TextField(index=True)

    return Customer


def _load_missing(c: Ctx) -> None:
    customer = _model(_db(c.server.port))
    customer.load("ada@example.com")


FAM.add(
    "model_not_found",
    NF,
    "Model.load of a primary key never saved: KeyError('Object not found.')",
    _load_missing,
)


def _get_none(c: Ctx) -> None:
    customer = _model(_db(c.server.port))
    customer.create(email="bob@example.com", plan="free")
    customer.get(customer.plan == "enterprise")


FAM.add(
    "model_get_no_match",
    NF | INT,
    "Model.get with an expression no instance matches: ValueError, got 0 results",
    _get_none,
)


def _rate_limited(c: Ctx) -> None:
    db = _db(c.server.port)
    limit = db.rate_limit(_ns(), limit=2, per=3600)

    @limit.rate_limited(key_function=lambda to: to)  # type: ignore[untyped-decorator]
    def send(to: str) -> str:
        return to

    for _ in range(3):
        send("ada@example.com")


FAM.add(
    "rate_limit_exceeded",
    RL,
    "a third send inside walrus's Redis-backed rate limit window (2 per hour)",
    _rate_limited,
)


def _lock_lost(c: Ctx) -> None:
    import time

    db = _db(c.server.port)
    lock = db.lock(_ns(), ttl=50)
    with lock:
        time.sleep(0.2)  # the work outlives the lock's ttl: another holder may have it now


FAM.add(
    "lock_expired_before_release",
    INT,
    "the lock's 50 ms ttl ran out during the work: RuntimeError, Error releasing lock",
    _lock_lost,
)


def _wrong_type(c: Ctx) -> None:
    db = _db(c.server.port)
    key = f"{_ns()}:cart"
    db.set(key, "legacy-string-value")
    db.Hash(key).update(sku_123="1")


FAM.add(
    "wrong_type",
    INT,
    "WRONGTYPE: the key holds a string, the pack writes it as a hash",
    _wrong_type,
)


def _group_on_non_stream(c: Ctx) -> None:
    db = _db(c.server.port)
    key = f"{_ns()}:events"
    db.set(key, "not-a-stream")
    db.consumer_group("billing", [key]).create()


FAM.add(
    "consumer_group_on_non_stream",
    INT,
    "walrus refuses to create a consumer group on a key that is not a stream: ValueError",
    _group_on_non_stream,
)


def _bad_slice(c: Ctx) -> None:
    db = _db(c.server.port)
    db.List(f"{_ns()}:queue")["a":"b"]


FAM.add(
    "caller_bad_slice",
    INT,
    "the pack slices a List with strings: TypeError from its own input",
    _bad_slice,
)
FAM.add("refused", NET, "nothing listens", _write(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _write(lambda c: 6379, host=UNRESOLVABLE))
FAM.add("silent", TO, "the server never answers (socket_timeout=1)", _write(lambda c: c.net.silent))
FAM.add("dropped", NET, "the peer closes the connection at once", _write(lambda c: c.net.close_now))
FAM.add("garbage", NET, "the peer answers bytes that are not RESP", _write(lambda c: c.net.garbage))
