"""pg8000 (a pure-Python PostgreSQL driver) against a real PostgreSQL 15 (Debian's
``postgresql``): the server's ErrorResponse fields arrive as a dict in the exception's args
(``{'S': 'ERROR', 'C': '23505', 'M': ...}``), one class for every SQLSTATE."""

from __future__ import annotations

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

FAM = family("pg8000", "PostgreSQL 15 (Debian), real", served(postgres), half="heldout3")


def _connect(
    ctx: Ctx,
    *,
    user: str = "app",
    password: str = "app-pw",
    database: str = "app",
    host: str = LOOPBACK,
    port: int | None = None,
) -> Any:
    import pg8000.native

    return pg8000.native.Connection(
        user,
        host=host,
        port=ctx.server.port if port is None else port,
        password=password,
        database=database,
        timeout=1,
    )


def _login(**kw: Any) -> Any:
    def run(ctx: Ctx) -> Any:
        _connect(ctx, **kw).close()

    return run


def _sql(*statements: str) -> Any:
    def run(ctx: Ctx) -> Any:
        conn = _connect(ctx)
        try:
            for s in statements:
                conn.run(s)
        finally:
            conn.close()

    return run


def _lock_timeout(ctx: Ctx) -> Any:
    holder, waiter = _connect(ctx), _connect(ctx)
    try:
        holder.run("BEGIN")
        holder.run("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        waiter.run("SET lock_timeout = '200ms'")
        return waiter.run("SELECT * FROM t")
    finally:
        holder.close()
        waiter.close()


FAM.add("wrong_password", AUTH, "28P01 password authentication failed", _login(password="x"))
FAM.add(
    "role_cannot_login",
    AUTH,
    "28000 role is not permitted to log in",
    _login(user="sleeper", password="sleeper-pw"),
)
FAM.add("no_database", NF, "3D000 database does not exist", _login(database="nodb"))
FAM.add(
    "role_connection_limit",
    RL | NET,
    "53300 too many connections for role: a slot may free later",
    _login(user="single", password="single-pw"),
)
FAM.add("no_table", NF, "42P01 relation does not exist", _sql("SELECT * FROM missing_t"))
FAM.add(
    "no_column",
    NF | INT,
    "42703 column does not exist (the pack's query names a column the table lacks)",
    _sql("SELECT nosuch FROM t"),
)
FAM.add("permission", AUTH, "42501 permission denied for table", _sql("SELECT * FROM secret"))
FAM.add("unique", EXISTS, "23505 duplicate key value", _sql("INSERT INTO t VALUES (2, 'dup')"))
FAM.add(
    "not_null",
    INT,
    "23502 null value violates not-null constraint (bad input)",
    _sql("INSERT INTO t VALUES (7, NULL)"),
)
FAM.add("division", INT, "22012 division by zero", _sql("SELECT 1 / 0"))
FAM.add(
    "read_only_tx",
    INT,
    "25006 cannot execute INSERT in a read-only transaction",
    _sql("BEGIN READ ONLY", "INSERT INTO t VALUES (8, 'x')"),
)
FAM.add(
    "statement_timeout",
    TO,
    "57014 canceling statement due to statement timeout",
    _sql("SET statement_timeout = '200ms'", "SELECT pg_sleep(3)"),
)
FAM.add("lock_timeout", TO, "55P03 canceling statement due to lock timeout", _lock_timeout)


def _transport(port: Any, host: str = LOOPBACK) -> Any:
    def run(ctx: Ctx) -> Any:
        _connect(ctx, host=host, port=port(ctx)).close()

    return run


FAM.add("refused", NET, "nothing listens", _transport(lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _transport(lambda c: 5432, UNRESOLVABLE))
FAM.add("silent", TO, "server never answers (timeout=1)", _transport(lambda c: c.net.silent))
FAM.add("dropped", NET, "closed at once", _transport(lambda c: c.net.close_now))
