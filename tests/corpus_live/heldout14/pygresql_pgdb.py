"""PyGreSQL's DB-API 2 module ``pgdb`` (the ``PyGreSQL`` package, a C extension over libpq)
against a real PostgreSQL (Debian's ``postgresql``, SCRAM authentication) started by the
family's setup in its own scratch directory. Logins, missing databases and tables, privileges,
constraints, server-side timeouts and lock waits are the server's own answers; the transport
failures are real sockets on 127.0.0.1. Nothing is faked."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pgdb

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
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]

FAM = family(
    "pygresql",
    "PyGreSQL (pgdb) against PostgreSQL (Debian), real",
    served(postgres),
    half="heldout14",
)


def _connect(
    c: Ctx,
    *,
    user: str = "app",
    password: str = "app-pw",
    database: str = "app",
    host: str = LOOPBACK,
    port: int | None = None,
    options: str = "",
) -> Any:
    return pgdb.connect(
        host=host,
        port=c.server.port if port is None else port,
        user=user,
        password=password,
        database=database,
        connect_timeout=2,
        sslmode="disable",
        gssencmode="disable",
        options=options,
    )


def _sql(statement: str, **kw: Any) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        con = _connect(c, **kw)
        try:
            cur = con.cursor()
            cur.execute(statement)
            con.commit()
        finally:
            con.close()

    return run


def _login(**kw: Any) -> Callable[[Ctx], None]:
    return lambda c: _connect(c, **kw).close()


FAM.add("wrong_password", AUTH, "password authentication failed", _login(password="nope"))
FAM.add(
    "nologin_role",
    AUTH,
    "the role may not log in",
    _login(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for the role (limit 0)",
    _login(user="single", password="single-pw"),
)
FAM.add("missing_database", NF, "database ghost does not exist", _login(database="ghost"))
FAM.add("table_denied", AUTH, "permission denied for table secret", _sql("SELECT * FROM secret"))
FAM.add("missing_table", NF | INT, "relation ghost does not exist", _sql("SELECT * FROM ghost"))
FAM.add(
    "duplicate_key",
    EXISTS | INT,
    "the primary key 1 exists",
    _sql("INSERT INTO t VALUES (1, 'uno')"),
)
FAM.add(
    "value_too_long",
    INT,
    "a value longer than varchar(4)",
    _sql("INSERT INTO t VALUES (9, 'far too long')"),
)
FAM.add("syntax", INT, "an SQL syntax error", _sql("SELEC id FROM t"))
FAM.add(
    "statement_timeout",
    TO,
    "statement_timeout 300ms cancels pg_sleep(5)",
    _sql("SELECT pg_sleep(5)", options="-c statement_timeout=300"),
)


def _lock_wait(c: Ctx) -> None:
    holder = _connect(c)
    try:
        hc = holder.cursor()
        hc.execute("SELECT * FROM t WHERE id = 1 FOR UPDATE")
        _sql("UPDATE t SET name = 'x' WHERE id = 1", options="-c lock_timeout=300")(c)
    finally:
        with contextlib.suppress(pgdb.Error):
            holder.rollback()
        holder.close()


FAM.add("lock_timeout", TO, "another session holds the row lock: lock_timeout 300ms", _lock_wait)
FAM.add("refused", NET, "nothing listens", lambda c: _login(port=c.net.closed)(c))
FAM.add("dns", NET, "host does not resolve", _login(host=UNRESOLVABLE, port=5432))
FAM.add(
    "silent",
    TO,
    "the server never answers: libpq's 2 s connect_timeout expires",
    lambda c: _login(port=c.net.silent)(c),
)
FAM.add(
    "dropped",
    NET,
    "the server closes the connection at once",
    lambda c: _login(port=c.net.close_now)(c),
)
