"""pyodbc through unixODBC's driver manager and the PostgreSQL ODBC driver (Debian's
odbc-postgresql, psqlODBC, named by its path in the connection string: no DSN, no
odbcinst.ini entry) against a real PostgreSQL 15 (Debian's ``postgres``, SCRAM) started by
the setup. Nothing is faked but the transport failures. pyodbc raises its DB-API classes
(``OperationalError``, ``ProgrammingError``, ``IntegrityError``, ``DataError``, ``Error``)
with the ODBC SQLSTATE first in ``args`` and the driver's diagnostic text, the server's
message quoted in it, second."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    DEP,
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

DRIVER = "/usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so"


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    if not Path(DRIVER).exists():
        raise RuntimeError(f"not installed: {DRIVER} (odbc-postgresql: scripts/setup, CP_APT_DEV)")
    return postgres(stack, work)


FAM = family(
    "pyodbc",
    "pyodbc + psqlODBC against PostgreSQL 15 (Debian), real",
    served(_start),
    half="heldout17",
)


def _connect(
    port: int,
    *,
    host: str = LOOPBACK,
    user: str = "app",
    password: str = "app-pw",
    db: str = "app",
    driver: str = DRIVER,
) -> Any:
    import pyodbc  # type: ignore[import-not-found]

    return pyodbc.connect(
        f"DRIVER={{{driver}}};SERVER={host};PORT={port};DATABASE={db};UID={user};PWD={password};"
        "SSLmode=disable;",
        timeout=1,  # the login timeout
    )


def _q(
    sql: str | None = "SELECT 1",
    port: Callable[[Ctx], int] = lambda c: c.server.port,
    **kw: Any,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        conn = _connect(port(c), **kw)
        try:
            if sql:
                cur = conn.cursor()
                cur.execute(sql)
                conn.commit()
        finally:
            conn.close()

    return run


FAM.add("wrong_password", AUTH, "password authentication failed (08001)", _q(password="nope"))
FAM.add("unknown_role", AUTH, "a role that does not exist", _q(user="ghost", password="x"))
FAM.add(
    "nologin_role",
    AUTH,
    "the role is not permitted to log in",
    _q(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for role single (CONNECTION LIMIT 0)",
    _q(user="single", password="single-pw"),
)
FAM.add("missing_database", NF, "database ghost does not exist", _q(db="ghost"))
FAM.add(
    "missing_table",
    NF | INT,
    "42P01: relation does not exist",
    _q("SELECT id FROM invoices WHERE id = 1"),
)
FAM.add(
    "duplicate_key",
    EXISTS,
    "23505: duplicate key value violates the primary key (IntegrityError)",
    _q("INSERT INTO t VALUES (1, 'dup')"),
)
FAM.add(
    "value_too_long",
    INT,
    "22001: the pack inserts a value longer than varchar(4) (DataError)",
    _q("INSERT INTO t VALUES (9, 'far too long')"),
)
FAM.add(
    "permission_denied_table",
    AUTH,
    "42501: permission denied for table secret",
    _q("SELECT x FROM secret"),
)
FAM.add("syntax_error", INT, "42601: the pack's SQL does not parse", _q("SELEC id FROM t"))
FAM.add(
    "statement_timeout",
    TO,
    "57014: canceling statement due to statement timeout (200 ms)",
    _q("SET statement_timeout = 200; SELECT pg_sleep(2)"),
)
FAM.add(
    "driver_not_installed",
    DEP | INT,
    "the connection string names an ODBC driver that is not installed: unixODBC cannot open it",
    _q(driver="Oracle 21 ODBC driver"),
)
FAM.add("refused", NET, "nothing listens", _q(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _q(port=lambda c: 5432, host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never answers the startup packet: the login timeout expires",
    _q(port=lambda c: c.net.silent),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not PostgreSQL's protocol",
    _q(port=lambda c: c.net.garbage),
)
