"""python-redis-lock (``redis_lock.Lock``: a distributed lock on ``SET NX`` with a signal list
and Lua scripts) against real Redis 7 servers (Debian's ``redis-server``): ACL users (``app``
may do everything, ``reader`` only read; the default user is off), a server whose
``maxmemory`` refuses every write, a read-only replica whose primary is down. Nothing is
faked but the transport failures. The library's own exceptions (``NotAcquired``,
``AlreadyAcquired``, ``TimeoutTooLarge``...) and redis-py's errors pass through."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
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
    "python-redis-lock",
    "Redis 7 (Debian redis-server), real",
    served(redis_streams),
    half="heldout18",
)

logging.getLogger("redis_lock").setLevel(logging.CRITICAL)  # it logs each failed acquire


def _client(port: int, *, user: str = "app", password: str = "app-pw", host: str = LOOPBACK) -> Any:
    from redis import StrictRedis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return StrictRedis(
        host=host,
        port=port,
        username=user,
        password=password,
        socket_timeout=1,
        socket_connect_timeout=1,
        retry=Retry(NoBackoff(), 0),  # the pack fails fast: its caller decides on retries
    )


def _name() -> str:
    return f"nightly-export-{os.urandom(4).hex()}"  # a lock of its own: runs twice are alike


def _lock(client: Any, name: str, **kw: Any) -> Any:
    import redis_lock  # type: ignore[import-untyped]

    return redis_lock.Lock(client, name, **kw)


def _take(
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        lock = _lock(_client(port(c), user=user, password=password, host=host), _name(), expire=30)
        with lock:
            pass

    return run


FAM.add("wrong_password", AUTH, "WRONGPASS invalid username-password pair", _take(password="x"))
FAM.add(
    "read_only_user",
    AUTH,
    "NOPERM: the reader ACL user may not SET the lock key",
    _take(user="reader", password="reader-pw"),
)
FAM.add(
    "out_of_memory",
    QUOTA,
    "OOM command not allowed when used memory > 'maxmemory' (noeviction)",
    _take(lambda c: c.server.full_port, user="default", password=""),
)
FAM.add(
    "read_only_replica",
    NET | INT,
    "MASTERDOWN: the address is a replica whose primary is down (serve-stale-data no)",
    _take(lambda c: c.server.replica_port, user="default", password=""),
)


def _held_elsewhere(c: Ctx) -> None:
    name = _name()
    other = _lock(_client(c.server.port), name, expire=30)
    assert other.acquire(blocking=False)
    try:
        with _lock(_client(c.server.port), name, expire=30, blocking=False):
            pass
    finally:
        other.release()


FAM.add(
    "held_by_another_worker",
    INT,
    "another worker holds the lock; a non-blocking with-block raises NotAcquired",
    _held_elsewhere,
)


def _expired_before_release(c: Ctx) -> None:
    import time

    lock = _lock(_client(c.server.port), _name(), expire=1)
    lock.acquire()
    time.sleep(1.2)  # the work outlived the lock's expire: another worker may hold it now
    lock.release()


FAM.add(
    "expired_before_release",
    INT,
    "the lock's 1 s expire ran out during the work: release raises NotAcquired",
    _expired_before_release,
)


def _extend_lost(c: Ctx) -> None:
    lock = _lock(_client(c.server.port), _name(), expire=30)
    lock.acquire()
    lock.reset()  # an operator's reset (deadlock recovery) removed it under the worker
    lock.extend(60)


FAM.add(
    "extend_after_reset",
    INT,
    "an operator reset the lock: extend() raises NotAcquired",
    _extend_lost,
)


def _acquire_twice(c: Ctx) -> None:
    lock = _lock(_client(c.server.port), _name(), expire=30)
    lock.acquire()
    try:
        lock.acquire()
    finally:
        lock.release()


FAM.add(
    "acquired_twice",
    INT,
    "the pack acquires the same Lock instance twice: AlreadyAcquired",
    _acquire_twice,
)


def _timeout_too_large(c: Ctx) -> None:
    _lock(_client(c.server.port), _name(), expire=5).acquire(timeout=60)


FAM.add(
    "timeout_larger_than_expire",
    INT,
    "the pack waits 60 s on a lock that expires in 5 s: TimeoutTooLarge",
    _timeout_too_large,
)


def _not_expirable(c: Ctx) -> None:
    lock = _lock(_client(c.server.port), _name())
    lock.acquire()
    try:
        lock.extend(30)
    finally:
        lock.release()


FAM.add(
    "extend_without_expire",
    INT,
    "the lock was taken with no expire: extend() raises NotExpirable",
    _not_expirable,
)


def _negative_expire(c: Ctx) -> None:
    _lock(_client(c.server.port), _name(), expire=-5)


FAM.add(
    "negative_expire",
    INT,
    "the pack passes expire=-5: ValueError from the library's own check",
    _negative_expire,
)
FAM.add("refused", NET, "nothing listens", _take(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _take(lambda c: 6379, host=UNRESOLVABLE))
FAM.add("silent", TO, "the server never answers (socket_timeout=1)", _take(lambda c: c.net.silent))
FAM.add("dropped", NET, "the peer closes the connection at once", _take(lambda c: c.net.close_now))
FAM.add("garbage", NET, "the peer answers bytes that are not RESP", _take(lambda c: c.net.garbage))
