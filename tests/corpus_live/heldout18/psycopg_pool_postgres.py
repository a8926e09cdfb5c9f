"""psycopg-pool (``psycopg_pool.ConnectionPool``: psycopg 3's connection pool, its workers
connecting in the background) against a real PostgreSQL (Debian's ``postgresql``): role
``app`` owning database ``app`` (table ``t``: ``id`` primary key, ``name varchar(4)``; a
table ``secret`` it may not read). Nothing is faked but the transport failures. The pool's
own exceptions (``PoolTimeout``, ``TooManyRequests``, ``PoolClosed``) reach the pack where a
connection cannot be had (the pool retries failed connections in its workers and logs
them; the caller only waits); errors of statements run on a pooled connection are
psycopg's."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]

FAM = family(
    "psycopg-pool",
    "PostgreSQL (Debian), real",
    served(postgres),
    half="heldout18",
)

logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)  # it logs each failed attempt


def _conninfo(
    port: int, *, user: str = "app", password: str = "app-pw", host: str = LOOPBACK
) -> str:
    return f"host={host} port={port} dbname=app user={user} password={password} connect_timeout=1"


def _pool(conninfo: str, **kw: Any) -> Any:
    from psycopg_pool import ConnectionPool

    options: dict[str, Any] = {"min_size": 1, "max_size": 1, "timeout": 1.0, "open": False}
    options.update(kw)
    return ConnectionPool(conninfo, **options)


def _open(
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        pool = _pool(_conninfo(port(c), user=user, password=password, host=host))
        try:
            pool.open(wait=True, timeout=1.0)
        finally:
            pool.close(timeout=1.0)

    return run


def _sql(sql: str, **kw: Any) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        with _pool(_conninfo(c.server.port), **kw) as pool, pool.connection() as conn:
            conn.execute(sql)

    return run


FAM.add(
    "wrong_password",
    AUTH | TO,
    "password authentication fails in the pool's worker: the pool never fills, PoolTimeout "
    "(pool initialization incomplete)",
    _open(password="not-it"),
)
FAM.add(
    "permission_denied",
    AUTH,
    "app may not read the secret table: InsufficientPrivilege",
    _sql("SELECT * FROM secret"),
)
FAM.add(
    "undefined_table",
    NF,
    "relation does not exist: UndefinedTable",
    _sql("SELECT * FROM invoices"),
)
FAM.add(
    "unique_violation",
    EXISTS | INT,
    "id 1 is taken: UniqueViolation on t's primary key",
    _sql("INSERT INTO t VALUES (1, 'dup')"),
)
FAM.add(
    "value_too_long",
    INT,
    "the pack writes 11 characters into varchar(4): StringDataRightTruncation",
    _sql("INSERT INTO t VALUES (90, 'eleven-char')"),
)
FAM.add(
    "statement_timeout",
    TO,
    "statement_timeout=200ms set on the pool's connections cancels pg_sleep(2): QueryCanceled",
    _sql("SELECT pg_sleep(2)", kwargs={"options": "-c statement_timeout=200"}),
)


def _exhausted(c: Ctx) -> None:
    with (
        _pool(_conninfo(c.server.port)) as pool,
        pool.connection(),
        pool.connection(timeout=0.5),
    ):
        pass


FAM.add(
    "pool_exhausted",
    TO,
    "the only connection is in use: the second checkout waits 0.5 s, PoolTimeout",
    _exhausted,
)


def _too_many_waiting(c: Ctx) -> None:
    with _pool(_conninfo(c.server.port), max_waiting=1) as pool, pool.connection():
        waiter = threading.Thread(target=_wait_quietly, args=(pool,))
        waiter.start()
        try:
            for _ in range(50):  # until the first waiter is queued
                if pool.get_stats().get("requests_waiting", 0) >= 1:
                    break
                threading.Event().wait(0.02)
            with pool.connection(timeout=0.5):
                pass
        finally:
            waiter.join()


def _wait_quietly(pool: Any) -> None:
    from psycopg_pool import PoolTimeout

    try:
        with pool.connection(timeout=1.0):
            pass
    except PoolTimeout:
        pass


FAM.add(
    "too_many_waiting",
    RL | INT,
    "max_waiting=1 and one client already queued: the pool refuses another, TooManyRequests",
    _too_many_waiting,
)


def _closed(c: Ctx) -> None:
    pool = _pool(_conninfo(c.server.port))
    pool.open(wait=True)
    pool.close()
    with pool.connection():
        pass


FAM.add(
    "pool_closed",
    INT,
    "the pack checks out from a pool it already closed: PoolClosed",
    _closed,
)


def _terminated(c: Ctx) -> None:
    import psycopg

    with _pool(_conninfo(c.server.port)) as pool, pool.connection() as conn:
        pid = conn.info.backend_pid
        with psycopg.connect(_conninfo(c.server.port), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        conn.execute("SELECT 1")


FAM.add(
    "backend_terminated",
    NET,
    "the pooled connection's backend is terminated: terminating connection due to "
    "administrator command",
    _terminated,
)
FAM.add(
    "refused",
    NET | TO,
    "nothing listens: the worker's connections fail, PoolTimeout",
    _open(lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET | TO,
    "host does not resolve (.invalid): the worker's connections fail, PoolTimeout",
    _open(lambda c: 5432, host=UNRESOLVABLE),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: PoolTimeout",
    _open(lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET | TO,
    "the peer closes each connection at once: PoolTimeout",
    _open(lambda c: c.net.close_now),
)
