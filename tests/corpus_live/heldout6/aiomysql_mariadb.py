"""aiomysql (asyncio, PyMySQL's protocol code underneath) against a real MariaDB 10.11
(Debian's ``mariadb-server``): the server's error numbers on ``pymysql.err`` classes
(``OperationalError(1045, ...)``...), 2003/2013 for the transport, ``asyncio`` timeouts where
the case bounds a wait, a pool that has no free connection."""

from __future__ import annotations

import asyncio
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
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

FAM = family(
    "aiomysql",
    "MariaDB 10.11 (Debian mariadb-server), real",
    served(mariadb),
    half="heldout6",
)


def _kw(ctx: Ctx, **over: Any) -> dict[str, Any]:
    kw = ctx.server.kw(**over)
    kw["db"] = kw.pop("database")
    return kw


def _sql(*statements: str, **over: Any) -> Any:
    async def go(ctx: Ctx) -> None:
        import aiomysql

        conn = await aiomysql.connect(**_kw(ctx, **over))
        try:
            async with conn.cursor() as cur:
                for s in statements:
                    await cur.execute(s)
                    await cur.fetchall()
            await conn.commit()
        finally:
            conn.close()

    return lambda ctx: run_async(go(ctx))


def _connect(**over: Any) -> Any:
    async def go(ctx: Ctx) -> None:
        import aiomysql

        # connect_timeout bounds the TCP connect only: the pack bounds the whole handshake
        conn = await asyncio.wait_for(aiomysql.connect(**_kw(ctx, **over)), 1.5)
        conn.close()

    return lambda ctx: run_async(go(ctx))


async def _lock_wait(ctx: Ctx) -> None:
    import aiomysql

    holder = await aiomysql.connect(**_kw(ctx))
    waiter = await aiomysql.connect(**_kw(ctx))
    try:
        await holder.begin()
        async with holder.cursor() as hc:
            await hc.execute("SELECT * FROM locked WHERE id = 1 FOR UPDATE")
            await hc.fetchall()
        async with waiter.cursor() as wc:
            await wc.execute("SET SESSION innodb_lock_wait_timeout = 1")
            await wc.execute("DELETE FROM locked WHERE id = 1")
    finally:
        holder.close()
        waiter.close()


async def _second_connection(ctx: Ctx) -> None:
    import aiomysql

    first = await aiomysql.connect(**_kw(ctx, user="single", password="single-pw", database=None))
    try:
        (
            await aiomysql.connect(**_kw(ctx, user="single", password="single-pw", database=None))
        ).close()
    finally:
        first.close()


async def _pool_exhausted(ctx: Ctx) -> None:
    import aiomysql

    pool = await aiomysql.create_pool(minsize=1, maxsize=1, **_kw(ctx))
    try:
        # every connection is taken: the second acquire waits, bounded by the pack
        async with pool.acquire(), asyncio.timeout(0.5), pool.acquire():
            pass
    finally:
        pool.close()
        await pool.wait_closed()


async def _query_bounded(ctx: Ctx) -> None:
    import aiomysql

    conn = await aiomysql.connect(**_kw(ctx))
    try:
        async with conn.cursor() as cur:
            await asyncio.wait_for(cur.execute("SELECT SLEEP(3)"), 0.5)
    finally:
        conn.close()


FAM.add(
    "wrong_password", AUTH, "1045 access denied for user (bad password)", _connect(password="bad")
)
FAM.add(
    "locked_account",
    AUTH,
    "4151 access denied, this account is locked",
    _connect(user="locked", password="locked-pw", database=None),
)
FAM.add(
    "select_denied",
    AUTH,
    "1142 SELECT command denied to user 'limited' for table secret",
    _sql("SELECT * FROM app.secret", user="limited", password="limited-pw", database=None),
)
FAM.add(
    "unknown_database",
    NF,
    "1049 unknown database (a user with global grants)",
    _connect(user="wide", password="wide-pw", database="missing_db"),
)
FAM.add("no_table", NF, "1146 table app.gone doesn't exist", _sql("UPDATE gone SET x = 1"))
FAM.add(
    "duplicate_key",
    EXISTS,
    "1062 duplicate entry '1' for key PRIMARY",
    _sql("INSERT INTO t VALUES (1, 'a')"),
)
FAM.add(
    "data_too_long",
    INT,
    "1406 data too long for column 'name' (strict mode: the caller's value)",
    _sql("INSERT INTO t VALUES (5, 'much too long')"),
)
FAM.add("bad_sql", INT, "1064 error in your SQL syntax", _sql("SELEC * FROM t"))
FAM.add(
    "lock_wait",
    TO,
    "1205 lock wait timeout exceeded (innodb_lock_wait_timeout 1)",
    lambda c: run_async(_lock_wait(c)),
)
FAM.add(
    "user_connections",
    RL | QUOTA,
    "1226 user 'single' has exceeded the max_user_connections resource (1)",
    lambda c: run_async(_second_connection(c)),
)
FAM.add(
    "pool_exhausted",
    TO,
    "no free connection in a pool of 1 within the pack's 0.5 s (asyncio.timeout)",
    lambda c: run_async(_pool_exhausted(c)),
)
FAM.add(
    "query_bounded",
    TO,
    "SELECT SLEEP(3) outlives the pack's 0.5 s asyncio.wait_for",
    lambda c: run_async(_query_bounded(c)),
)
FAM.add(
    "refused", NET, "2003 can't connect: nothing listens", lambda c: _connect(port=c.net.closed)(c)
)
FAM.add(
    "dns", NET, "2003 can't connect: host does not resolve (.invalid)", _connect(host=UNRESOLVABLE)
)
FAM.add(
    "silent",
    TO,
    "the server never sends its greeting: the pack's 1.5 s bound on connect fires (connect_timeout covers the TCP connect only)",
    lambda c: _connect(port=c.net.silent, connect_timeout=1)(c),
)
FAM.add(
    "dropped",
    NET,
    "2013 lost connection during handshake: closed at once",
    lambda c: _connect(port=c.net.close_now)(c),
)
