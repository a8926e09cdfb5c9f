"""asyncpg against a real PostgreSQL (Debian's ``postgresql``): SQLSTATE-coded server errors
(``asyncpg.exceptions.*Error`` with ``sqlstate``) and the transport's failures."""

from __future__ import annotations

import asyncio
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

FAM = family("asyncpg", "PostgreSQL 15 (Debian), real", served(postgres), half="heldout2")


async def _connect(
    ctx: Ctx,
    *,
    user: str = "app",
    password: str = "app-pw",
    database: str = "app",
    host: str = LOOPBACK,
    port: int | None = None,
) -> Any:
    import asyncpg

    return await asyncpg.connect(
        host=host,
        port=ctx.server.port if port is None else port,
        user=user,
        password=password,
        database=database,
        timeout=1,
        ssl=False,
    )


def _sql(sql: str, **connect: Any) -> Any:
    async def run(ctx: Ctx) -> Any:
        conn = await _connect(ctx, **connect)
        try:
            return await conn.execute(sql)
        finally:
            await conn.close()

    return run


def _login(**connect: Any) -> Any:
    async def run(ctx: Ctx) -> Any:
        conn = await _connect(ctx, **connect)
        await conn.close()

    return run


def _transport(port: Any = None, host: str = LOOPBACK) -> Any:
    async def run(ctx: Ctx) -> Any:
        conn = await _connect(ctx, host=host, port=port(ctx))
        await conn.close()

    return run


async def _lock_timeout(ctx: Ctx) -> Any:
    holder = await _connect(ctx)
    waiter = await _connect(ctx)
    try:
        async with holder.transaction():
            await holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
            await waiter.execute("SET lock_timeout = '200ms'")
            return await waiter.fetch("SELECT * FROM t")
    finally:
        await holder.close()
        await waiter.close()


async def _deadlock(ctx: Ctx) -> Any:
    a = await _connect(ctx)
    b = await _connect(ctx)
    ta, tb = a.transaction(), b.transaction()
    await ta.start()
    await tb.start()
    try:
        await a.execute("UPDATE t SET name = 'a' WHERE id = 1")
        await b.execute("UPDATE t SET name = 'b' WHERE id = 2")
        await asyncio.gather(
            a.execute("UPDATE t SET name = 'a' WHERE id = 2"),
            b.execute("UPDATE t SET name = 'b' WHERE id = 1"),
        )
    finally:
        for conn in (a, b):
            conn.terminate()


FAM.add("wrong_password", AUTH, "28P01 password authentication failed", _login(password="nope"))
FAM.add(
    "unknown_role",
    AUTH,
    "28P01 for a role that does not exist: a credential failure, not a missing resource",
    _login(user="ghost", password="x"),
)
FAM.add(
    "role_cannot_login",
    AUTH,
    "28000 role is not permitted to log in",
    _login(user="sleeper", password="sleeper-pw"),
)
FAM.add("no_database", NF, "3D000 database does not exist", _login(database="ghostdb"))
FAM.add(
    "role_connection_limit",
    RL | NET,
    "53300 too many connections for role: retry later, when a slot frees",
    _login(user="single", password="single-pw"),
)
FAM.add("no_table", NF, "42P01 relation does not exist", _sql("SELECT * FROM ghost_t"))
FAM.add("permission", AUTH, "42501 permission denied for table", _sql("SELECT * FROM secret"))
FAM.add("unique", EXISTS, "23505 duplicate key value", _sql("INSERT INTO t VALUES (1, 'dup')"))
FAM.add("syntax", INT, "42601 syntax error", _sql("SELEC 1"))
FAM.add(
    "too_long", INT, "22001 value too long for type", _sql("INSERT INTO t VALUES (9, 'longer')")
)
FAM.add(
    "statement_timeout",
    TO,
    "57014 canceling statement due to statement timeout",
    _sql("SET statement_timeout = '200ms'; SELECT pg_sleep(3)"),
)
FAM.add("lock_timeout", TO, "55P03 canceling statement due to lock timeout", _lock_timeout)
FAM.add(
    "deadlock",
    TO | NET | INT,
    "40P01 deadlock detected: the transaction may be retried (never a permanent code)",
    _deadlock,
)
FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 5432, UNRESOLVABLE))
FAM.add("silent", TO, "server never answers (connect timeout)", _transport(lambda c: c.net.silent))
FAM.add("dropped", NET, "closed at once", _transport(lambda c: c.net.close_now))
