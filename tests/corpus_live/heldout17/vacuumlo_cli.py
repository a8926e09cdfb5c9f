"""PostgreSQL's ``vacuumlo`` CLI (Debian's postgresql-contrib 15) run as a pack runs it, a
command on argv whose database argument is a libpq connection string (the password in it,
``connect_timeout=1``, ``-w``), against a real PostgreSQL 15 (Debian's ``postgres``, SCRAM)
started by the setup: databases with large objects owned by another role, a table the role
may not read, a database it may not connect to. Nothing is faked. The failure is the exit
status and the ``vacuumlo: error: ...`` line the tool writes, the server's text quoted in it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    LOOPBACK,
    NET,
    NF,
    QUOTA,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout2._daemons import PG_ADMIN_PW, Postgres, postgres

Ctx = Served[Postgres]

_DATABASES = """
CREATE DATABASE docs OWNER app;
CREATE DATABASE hidden OWNER app;
CREATE DATABASE closed OWNER postgres;
REVOKE CONNECT ON DATABASE closed FROM PUBLIC;
"""

_PER_DB = {
    # an orphan large object of the superuser: the app role may not unlink it
    "app": "SELECT lo_create(0);",
    # the app's own table of references, and an orphan large object of its own
    "docs": (
        "CREATE TABLE refs (id int, doc oid); ALTER TABLE refs OWNER TO app;"
        "ALTER LARGE OBJECT 4242 OWNER TO app;"
    ),
    # a table with an oid column the app role may not read
    "hidden": "CREATE TABLE payroll (id int, scan oid); REVOKE ALL ON payroll FROM PUBLIC;",
}


def _psql(port: int, db: str, sql: str) -> None:
    subprocess.run(
        [
            *("psql", "-h", LOOPBACK, "-p", str(port), "-U", "postgres", "-d", db),
            *("-v", "ON_ERROR_STOP=1", "-q", "-f", "-"),
        ],
        input=sql.encode(),
        check=True,
        capture_output=True,
        env=dict(os.environ, PGPASSWORD=PG_ADMIN_PW),
        timeout=30,
    )


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    require("vacuumlo", "psql")
    pg = postgres(stack, work)
    _psql(pg.port, "postgres", _DATABASES)
    for db, sql in _PER_DB.items():
        _psql(pg.port, db, ("SELECT lo_create(4242);" if db == "docs" else "") + sql)
    return pg


FAM = family(
    "vacuumlo",
    "the vacuumlo CLI against PostgreSQL 15 (Debian), real",
    served(_start),
    half="heldout17",
)


def _lo(
    *extra: str,
    db: str | None = "docs",
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Any = None,
    conn_extra: str = "",
    lock: bool = False,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        argv = ["vacuumlo", "-w", *extra]
        if db is not None:
            argv.append(
                f"host={host} port={p} user={user} password={password} dbname={db} "
                f"connect_timeout=1 sslmode=disable gssencmode=disable {conn_extra}".strip()
            )
        if not lock:
            cli(argv, timeout=15)
            return
        # another session holds an exclusive lock on the table vacuumlo must scan
        holder = subprocess.Popen(
            [
                *("psql", "-h", LOOPBACK, "-p", str(c.server.port), "-U", "postgres"),
                *("-d", "docs", "-q", "-c"),
                "BEGIN; LOCK TABLE refs IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3);",
            ],
            env=dict(os.environ, PGPASSWORD=PG_ADMIN_PW),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            threading.Event().wait(0.5)
            cli(argv, timeout=15)
        finally:
            holder.terminate()
            holder.wait(5)

    return run


FAM.add("wrong_password", AUTH, "SCRAM password authentication fails", _lo(password="nope"))
FAM.add("unknown_role", AUTH, "a role that does not exist", _lo(user="ghost", password="x"))
FAM.add(
    "nologin_role",
    AUTH,
    "the role is not permitted to log in",
    _lo(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for the role (CONNECTION LIMIT 0)",
    _lo(user="single", password="single-pw"),
)
FAM.add("missing_database", NF, "the database does not exist", _lo(db="ghost"))
FAM.add(
    "no_connect_privilege",
    AUTH,
    "CONNECT on the database is revoked from PUBLIC: permission denied for database",
    _lo(db="closed"),
)
FAM.add(
    "not_owner_of_large_object",
    AUTH,
    "an orphan large object owned by the superuser: must be owner of large object",
    _lo(db="app"),
)
FAM.add(
    "unreadable_table",
    AUTH,
    "a table with an oid column the role may not SELECT: permission denied for table",
    _lo(db="hidden"),
)
FAM.add(
    "lock_timeout",
    TO,
    "another session holds an exclusive lock on the scanned table: lock_timeout expires",
    _lo(conn_extra="options='-c lock_timeout=300'", lock=True),
)
FAM.add(
    "bad_connection_option",
    INT,
    "the pack puts an option libpq does not know in the connection string",
    _lo(conn_extra="compression=on"),
)
FAM.add("negative_limit", INT, "the pack passes a negative -l transaction limit", _lo("-l", "-1"))
FAM.add("no_database_argument", INT, "the pack forgot the database argument", _lo(db=None))
FAM.add("refused", NET, "nothing listens", _lo(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _lo(host=UNRESOLVABLE, port=lambda c: 5432))
FAM.add(
    "silent",
    TO,
    "the server never answers the startup packet: connect_timeout expires",
    _lo(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the server closed the connection unexpectedly",
    _lo(port=lambda c: c.net.close_now),
)
