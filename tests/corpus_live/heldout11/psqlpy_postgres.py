"""psqlpy (an async PostgreSQL driver written in Rust on tokio-postgres) used as a pack uses it
(``psqlpy.connect`` with a one-second connect timeout under the pack's own deadline, no SSL, then ``execute``/``fetch``)
against a real PostgreSQL (Debian's ``postgresql``, SCRAM authentication: a role with a
connection limit of 0, a role that may not log in, a table its owner may not read). The
failure is psqlpy's own exception with the server's message in it. Nothing is faked."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import psqlpy

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
    require,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    require("psql")
    return postgres(stack, work)


FAM = family(
    "psqlpy",
    "psqlpy against PostgreSQL (Debian), real",
    served(_start),
    half="heldout11",
)


def _q(
    sql: str,
    params: list[Any] | None = None,
    *,
    db: str = "app",
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    options: str | None = None,
    deadline: float = 10.0,
) -> Callable[[Ctx], Coroutine[Any, Any, None]]:
    async def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        connecting = psqlpy.connect(
            username=user,
            password=password,
            host=host,
            port=p,
            db_name=db,
            options=options,
            connect_timeout_sec=1,
            ssl_mode=psqlpy.SslMode.Disable,
        )
        conn = await asyncio.wait_for(connecting, deadline)
        try:
            await conn.execute(sql, params)
        finally:
            conn.close()

    return run


FAM.add("wrong_password", AUTH, "password authentication failed", _q("SELECT 1", password="no"))
FAM.add(
    "nologin_role",
    AUTH,
    "role is not permitted to log in",
    _q("SELECT 1", user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for role (its limit is 0)",
    _q("SELECT 1", user="single", password="single-pw"),
)
FAM.add("missing_database", NF, "database ghost does not exist", _q("SELECT 1", db="ghost"))
FAM.add(
    "table_denied",
    AUTH,
    "permission denied for table secret",
    _q("SELECT * FROM secret"),
)
FAM.add(
    "duplicate_key",
    EXISTS | INT,
    "duplicate key value violates the primary key",
    _q("INSERT INTO t VALUES ($1, $2)", [1, "uno"]),
)
FAM.add(
    "missing_table",
    NF | INT,
    "relation orders does not exist (the pack's query)",
    _q("SELECT * FROM orders"),
)
FAM.add(
    "value_too_long",
    INT,
    "value too long for type character varying(4)",
    _q("INSERT INTO t VALUES ($1, $2)", [7, "seventy"]),
)
FAM.add("sql_syntax", INT, "syntax error in the pack's SQL", _q("SELEC * FROM t"))
FAM.add(
    "param_type",
    INT,
    "the pack binds a string where the statement wants an integer: refused by the driver",
    _q("SELECT name FROM t WHERE id = $1", ["one"]),
)
FAM.add(
    "statement_timeout",
    TO,
    "statement_timeout 300ms cancels pg_sleep(5)",
    _q("SELECT pg_sleep(5)", options="-c statement_timeout=300"),
)
FAM.add(
    "database_exists",
    EXISTS,
    "CREATE DATABASE app: it exists already",
    _q("CREATE DATABASE app", db="postgres", user="maker", password="maker-pw"),
)
FAM.add("refused", NET, "nothing listens", _q("SELECT 1", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _q("SELECT 1", host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "the server never answers the startup message: the pack's 1.5 s deadline expires",
    _q("SELECT 1", port=lambda c: c.net.silent, deadline=1.5),
)
FAM.add(
    "dropped",
    NET,
    "the server end closes the connection at once",
    _q("SELECT 1", port=lambda c: c.net.close_now),
)
