"""PostgreSQL's ``psql`` CLI against a real PostgreSQL 15 (Debian's ``postgresql``), as a
pack runs it: a script on stdin with ``ON_ERROR_STOP``, so each failure is psql's exit status
(2: the connection, 3: the script) and its ``psql:<stdin>:N: ERROR:  ...`` stderr lines."""

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
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]


def _start(stack: Any, work: Any) -> Postgres:
    require("psql")
    return postgres(stack, work)


FAM = family("psql", "PostgreSQL 15 (Debian), real", served(_start), half="heldout3")


def _psql(
    c: Ctx,
    sql: str = "SELECT 1;",
    *,
    user: str = "app",
    password: str = "app-pw",
    database: str = "app",
    host: str = LOOPBACK,
    port: int | None = None,
) -> None:
    uri = (
        f"postgresql://{user}:{password}@{host}:{c.server.port if port is None else port}/"
        f"{database}?connect_timeout=1&sslmode=disable"
    )
    cli(
        ["psql", "--no-psqlrc", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", uri, "-f", "-"],
        input=sql.encode(),
        timeout=15,
    )


def _sql(sql: str = "SELECT 1;", **kw: Any) -> Any:
    return lambda c: _psql(c, sql, **kw)


FAM.add("wrong_password", AUTH, "FATAL: password authentication failed", _sql(password="x"))
FAM.add(
    "role_cannot_login",
    AUTH,
    "FATAL: role is not permitted to log in",
    _sql(user="sleeper", password="sleeper-pw"),
)
FAM.add("no_database", NF, "FATAL: database does not exist", _sql(database="nodb"))
FAM.add(
    "connection_limit",
    RL | NET,
    "FATAL: too many connections for role (a slot may free later)",
    _sql(user="single", password="single-pw"),
)
FAM.add("no_table", NF, "ERROR: relation does not exist", _sql("SELECT * FROM missing_t;"))
FAM.add("drop_missing", NF, "ERROR: table does not exist", _sql("DROP TABLE ghost;"))
FAM.add("permission", AUTH, "ERROR: permission denied for table", _sql("SELECT * FROM secret;"))
FAM.add("duplicate", EXISTS, "ERROR: duplicate key value", _sql("INSERT INTO t VALUES (1, 'dup');"))
FAM.add("table_exists", EXISTS, "ERROR: relation already exists", _sql("CREATE TABLE t (x int);"))
FAM.add("syntax", INT, "ERROR: syntax error at or near", _sql("SELEC 1;"))
FAM.add("division", INT, "ERROR: division by zero", _sql("SELECT 1/0;"))
FAM.add(
    "statement_timeout",
    TO,
    "ERROR: canceling statement due to statement timeout",
    _sql("SET statement_timeout = '200ms'; SELECT pg_sleep(3);"),
)
FAM.add(
    "refused",
    NET,
    "connection refused: is the server running on that host?",
    lambda c: _psql(c, port=c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "could not translate host name to address",
    lambda c: _psql(c, host=UNRESOLVABLE, port=5432),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: connect_timeout=1 expires",
    lambda c: _psql(c, port=c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "server closed the connection unexpectedly",
    lambda c: _psql(c, port=c.net.close_now),
)
