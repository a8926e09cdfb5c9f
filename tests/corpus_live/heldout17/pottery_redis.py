"""pottery (Redis-backed Python containers and the Redlock distributed lock) against real
Redis 7 servers (Debian's ``redis-server``): ACL users (``app`` may do everything, ``reader``
only read; the default user is off), a server whose ``maxmemory`` refuses every write, a
read-only replica whose primary is down. Nothing is faked but the transport failures.
pottery raises its own exceptions (``KeyExistsError``, ``QueueEmptyError``,
``QuorumNotAchieved``, ``QuorumIsImpossible`` carrying the redis errors),
Python's container errors (``KeyError``, ``IndexError``, ``TypeError``) and redis-py's errors,
which pass through it."""

from __future__ import annotations

import os
from collections.abc import Callable
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

FAM = family(
    "pottery",
    "Redis 7 (Debian redis-server), real",
    served(redis_streams),
    half="heldout17",
)


def _redis(port: int, *, user: str = "app", password: str = "app-pw", host: str = LOOPBACK) -> Any:
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return redis.Redis(
        host=host,
        port=port,
        username=user,
        password=password,
        socket_timeout=1,
        socket_connect_timeout=1,
        retry=Retry(NoBackoff(), 0),  # the pack fails fast: its caller decides on retries
    )


def _key(name: str) -> str:
    return f"{name}-{os.urandom(4).hex()}"  # a key of its own: runs twice leave no trace


def _store(
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
) -> Callable[[Ctx], None]:
    """Write a session into a RedisDict, what most packs do with pottery."""

    def run(c: Ctx) -> None:
        from pottery import RedisDict

        r = _redis(port(c), user=user, password=password, host=host)
        sessions = RedisDict(redis=r, key=_key("sessions"))
        sessions["sess-42"] = {"user": "alice", "scopes": ["read"]}

    return run


def _with_app(op: Callable[[Any], Any]) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        op(_redis(c.server.port))

    return run


FAM.add("wrong_password", AUTH, "WRONGPASS invalid username-password pair", _store(password="x"))
FAM.add(
    "read_only_user",
    AUTH,
    "NOPERM: the reader ACL user may not run HSET",
    _store(user="reader", password="reader-pw"),
)
FAM.add(
    "out_of_memory",
    QUOTA,
    "OOM command not allowed when used memory > 'maxmemory' (noeviction)",
    _store(lambda c: c.server.full_port, user="default", password=""),
)
FAM.add(
    "read_only_replica",
    NET | INT,
    "READONLY: the address is a replica (its primary down), it refuses writes",
    _store(lambda c: c.server.replica_port, user="default", password=""),
)


def _missing_key(r: Any) -> None:
    from pottery import RedisDict

    RedisDict(redis=r, key=_key("sessions"))["sess-404"]


FAM.add(
    "missing_dict_key",
    NF,
    "RedisDict[key] of a key it does not hold: KeyError",
    _with_app(_missing_key),
)


def _key_exists(r: Any) -> None:
    from pottery import RedisDict

    key = _key("settings")
    first: dict[Any, Any] = {"theme": "dark"}
    RedisDict(first, redis=r, key=key)
    RedisDict({**first, "theme": "light"}, redis=r, key=key)


FAM.add(
    "key_exists",
    EXISTS,
    "a RedisDict created with initial data on a Redis key that already exists: KeyExistsError",
    _with_app(_key_exists),
)


def _queue_empty(r: Any) -> None:
    from pottery import RedisSimpleQueue

    RedisSimpleQueue(redis=r, key=_key("jobs")).get(timeout=0.5)


FAM.add(
    "queue_empty",
    TO | NF,
    "RedisSimpleQueue.get(timeout=0.5) on an empty queue: QueueEmptyError after the wait",
    _with_app(_queue_empty),
)


def _pop_empty(r: Any) -> None:
    from pottery import RedisList

    RedisList(redis=r, key=_key("outbox")).pop()


FAM.add(
    "pop_empty_list",
    NF | INT,
    "RedisList.pop() of an empty list: IndexError, pop index out of range",
    _with_app(_pop_empty),
)


def _not_json(r: Any) -> None:
    from pottery import RedisDict

    RedisDict(redis=r, key=_key("sessions"))["sess-1"] = {"started": object()}


FAM.add(
    "value_not_json",
    INT,
    "the pack stores a value pottery cannot encode as JSON: TypeError",
    _with_app(_not_json),
)


def _lock_held(r: Any) -> None:
    from pottery import Redlock

    key = _key("nightly-export")
    holder = Redlock(key=key, masters={r}, auto_release_time=5)
    assert holder.acquire(blocking=False)
    try:
        with Redlock(key=key, masters={r}, context_manager_timeout=0.5):
            pass
    finally:
        holder.release()


FAM.add(
    "lock_held_elsewhere",
    TO,
    "another holder keeps the Redlock: not acquired within context_manager_timeout=0.5 "
    "(QuorumNotAchieved)",
    _with_app(_lock_held),
)


def _lock_on(
    port: Callable[[Ctx], int], *, user: str = "app", password: str = "app-pw"
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        from pottery import Redlock

        r = _redis(port(c), user=user, password=password)
        lock = Redlock(key=_key("nightly-export"), masters={r}, raise_on_redis_errors=True)
        lock.acquire(blocking=False)

    return run


FAM.add(
    "lock_no_permission",
    AUTH,
    "the reader user cannot SET the lock key: QuorumIsImpossible carrying NOPERM",
    _lock_on(lambda c: c.server.port, user="reader", password="reader-pw"),
)
FAM.add(
    "lock_master_down",
    NET,
    "the only Redis master refuses connections: QuorumIsImpossible carrying ConnectionError",
    _lock_on(lambda c: c.net.closed),
)
FAM.add("dns", NET, "host does not resolve (.invalid)", _store(lambda c: 6379, host=UNRESOLVABLE))
FAM.add("silent", TO, "the server never answers (socket_timeout=1)", _store(lambda c: c.net.silent))
FAM.add("dropped", NET, "the peer closes the connection at once", _store(lambda c: c.net.close_now))
FAM.add("garbage", NET, "the peer answers bytes that are not RESP", _store(lambda c: c.net.garbage))
