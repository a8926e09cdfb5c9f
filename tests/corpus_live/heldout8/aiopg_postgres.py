"""aiopg (asyncio over psycopg2) against a real PostgreSQL (Debian's ``postgresql``, SCRAM
authentication): the failures are psycopg2's exceptions carrying the server's SQLSTATE and
message, and aiopg's own ``timeout`` (an ``asyncio`` timeout) for a server that never answers.
Nothing is faked."""

from __future__ import annotations

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
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    import aiopg  # noqa: F401 - skip cleanly when missing

    return postgres(stack, work)


FAM = family(
    "aiopg",
    "aiopg (psycopg2) against PostgreSQL (Debian), real",
    served(_start),
    half="heldout8",
)


def _dsn(host: str, port: int, user: str, password: str, db: str) -> str:
    return (
        f"host={host} port={port} user={user} password={password} dbname={db} "
        "sslmode=disable connect_timeout=1"
    )


async def _connect(
    host: str, port: int, *, user: str = "app", password: str = "app-pw", db: str = "app"
) -> Any:
    import aiopg

    return await aiopg.connect(_dsn(host, port, user, password, db), timeout=1.5)


def _login(**kw: str) -> Callable[[Ctx], Any]:
    async def go(c: Ctx) -> None:
        conn = await _connect(LOOPBACK, c.server.port, **kw)
        conn.close()

    return lambda c: run_async(go(c))


def _sql(*statements: str, user: str = "app", password: str = "app-pw") -> Callable[[Ctx], Any]:
    async def go(c: Ctx) -> None:
        conn = await _connect(LOOPBACK, c.server.port, user=user, password=password)
        try:
            cur = await conn.cursor()
            for sql in statements:
                await cur.execute(sql)
        finally:
            conn.close()

    return lambda c: run_async(go(c))


def _blocked(setting: str) -> Callable[[Ctx], Any]:
    def run(c: Ctx) -> Any:
        async def both() -> None:
            holder = await _connect(LOOPBACK, c.server.port)
            try:
                hcur = await holder.cursor()
                await hcur.execute("BEGIN")
                await hcur.execute("SELECT * FROM t WHERE id = 1 FOR UPDATE")
                conn = await _connect(LOOPBACK, c.server.port)
                try:
                    cur = await conn.cursor()
                    await cur.execute(setting)
                    await cur.execute("UPDATE t SET name = 'uno' WHERE id = 1")
                finally:
                    conn.close()
            finally:
                holder.close()

        return run_async(both())

    return run


FAM.add("wrong_password", AUTH, "password authentication failed", _login(password="nope"))
FAM.add(
    "nologin_role",
    AUTH,
    "the role is not permitted to log in",
    _login(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for the role (limit 0)",
    _login(user="single", password="single-pw", db="postgres"),
)
FAM.add("unknown_database", NF, "no such database", _login(db="ledger"))
FAM.add("unknown_table", NF, "no such relation", _sql("SELECT * FROM invoices"))
FAM.add("unknown_column", NF | INT, "no such column", _sql("SELECT price FROM t"))
FAM.add("permission_denied", AUTH, "app has no privilege on secret", _sql("SELECT * FROM secret"))
FAM.add(
    "duplicate_key",
    EXISTS,
    "a row with the primary key exists",
    _sql("INSERT INTO t VALUES (1, 'dup')"),
)
FAM.add(
    "value_too_long",
    INT,
    "the pack's value does not fit varchar(4)",
    _sql("INSERT INTO t VALUES (9, 'far too long')"),
)
FAM.add("syntax_error", INT, "the pack's SQL does not parse", _sql("SELEC 1"))
FAM.add(
    "lock_timeout", TO, "another session holds the row lock", _blocked("SET lock_timeout = 300")
)
FAM.add(
    "read_only_transaction",
    INT,
    "the pack writes in a session it set read-only",
    _sql("SET default_transaction_read_only = on", "DELETE FROM t WHERE id = 2"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    lambda c: run_async(_connect(LOOPBACK, c.net.closed)),
)
FAM.add("dns", NET, "host does not resolve", lambda c: run_async(_connect(UNRESOLVABLE, 5432)))
FAM.add(
    "silent",
    TO,
    "server never answers the startup packet",
    lambda c: run_async(_connect(LOOPBACK, c.net.silent)),
)
FAM.add(
    "dropped",
    NET,
    "closed at once",
    lambda c: run_async(_connect(LOOPBACK, c.net.close_now)),
)
