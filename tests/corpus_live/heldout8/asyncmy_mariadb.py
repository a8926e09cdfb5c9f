"""asyncmy (a Cython asyncio MySQL/MariaDB driver) against a real MariaDB (Debian's
``mariadb-server``): accounts with a wrong password, a locked account, narrow grants, a
one-connection limit and a one-query-per-hour limit; InnoDB row locks held by another session.
The failures are asyncmy's ``pymysql``-style exceptions carrying the server's error number and
message, or asyncmy's own transport errors. Nothing is faked."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
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
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    run_async,
    served,
)
from corpus_live.servers import MariaDB, mariadb

Ctx = Served[MariaDB]


def _start(stack: contextlib.ExitStack, work: Path) -> MariaDB:
    import asyncmy  # noqa: F401 - skip cleanly when the library is missing

    return mariadb(stack, work)


FAM = family(
    "asyncmy",
    "asyncmy against MariaDB (Debian), real",
    served(_start),
    half="heldout8",
)


async def _connect(
    host: str,
    port: int,
    *,
    user: str = "app",
    password: str = "app-pw",
    db: str = "app",
) -> Any:
    import asyncmy

    return await asyncmy.connect(
        host=host, port=port, user=user, password=password, database=db, connect_timeout=1
    )


async def _run(conn: Any, *statements: str) -> None:
    async with conn.cursor() as cur:
        for sql in statements:
            await cur.execute(sql)


def _sql(
    *statements: str, user: str = "app", password: str = "app-pw", db: str = "app"
) -> Callable[[Ctx], Any]:
    async def go(c: Ctx) -> None:
        conn = await _connect(LOOPBACK, c.server.port, user=user, password=password, db=db)
        try:
            await _run(conn, *statements)
        finally:
            conn.close()

    return lambda c: run_async(go(c))


def _second_connection(c: Ctx) -> Any:
    async def go() -> None:
        first = await _connect(LOOPBACK, c.server.port, user="single", password="single-pw")
        try:
            second = await _connect(LOOPBACK, c.server.port, user="single", password="single-pw")
            second.close()
        finally:
            first.close()

    return run_async(go())


def _row_locked(c: Ctx) -> Any:
    async def both() -> None:
        holder = await _connect(LOOPBACK, c.server.port)
        try:
            await _run(holder, "BEGIN", "SELECT * FROM locked WHERE id = 1 FOR UPDATE")
            waiter = await _connect(LOOPBACK, c.server.port)
            try:
                await _run(
                    waiter,
                    "SET SESSION innodb_lock_wait_timeout = 1",
                    "UPDATE locked SET id = 2 WHERE id = 1",
                )
            finally:
                waiter.close()
        finally:
            holder.close()

    return run_async(both())


def _transport(port: Callable[[Ctx], int], host: str = LOOPBACK) -> Callable[[Ctx], Any]:
    async def go(c: Ctx) -> None:
        conn = await asyncio.wait_for(_connect(host, port(c)), 1.5)
        conn.close()

    return lambda c: run_async(go(c))


FAM.add("wrong_password", AUTH, "access denied for app", _sql(password="nope"))
FAM.add(
    "account_locked",
    AUTH,
    "the account is locked",
    _sql(user="locked", password="locked-pw", db=""),
)
FAM.add(
    "unknown_database",
    NF | AUTH,
    "no such database (MariaDB answers access denied to a user with no grant on it)",
    _sql(db="ledger"),
)
FAM.add(
    "insert_denied",
    AUTH,
    "limited may only SELECT",
    _sql("INSERT INTO t VALUES (7, 'x')", user="limited", password="limited-pw"),
)
FAM.add(
    "max_user_connections",
    RL | QUOTA,
    "the account's single connection is in use",
    _second_connection,
)
FAM.add(
    "max_queries_per_hour",
    QUOTA | RL,
    "the account's one query per hour is spent",
    _sql("SELECT 1", "SELECT 2", user="hourly", password="hourly-pw"),
)
FAM.add("unknown_table", NF, "no such table", _sql("SELECT * FROM invoices"))
FAM.add("duplicate_key", EXISTS, "the primary key exists", _sql("INSERT INTO t VALUES (1, 'dup')"))
FAM.add(
    "foreign_key",
    INT,
    "the pack's child row references no parent",
    _sql("INSERT INTO child VALUES (42)"),
)
FAM.add(
    "data_too_long",
    INT,
    "the pack's value does not fit VARCHAR(4)",
    _sql("INSERT INTO t VALUES (5, 'far too long')"),
)
FAM.add("syntax_error", INT, "the pack's SQL does not parse", _sql("SELEC 1"))
FAM.add("lock_wait_timeout", TO, "another session holds the row lock", _row_locked)
FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 3306, UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "server never sends its handshake (the pack's 1.5 s deadline)",
    _transport(lambda c: c.net.silent),
)
FAM.add("dropped", NET, "closed at once", _transport(lambda c: c.net.close_now))
