"""PostgreSQL's ``pg_amcheck`` CLI (Debian's postgresql 15; the binary lives in the server's
bindir, not on PATH) run as a pack runs it, a command on argv with the password in
``PGPASSWORD`` and ``PGCONNECT_TIMEOUT=1``, against a real PostgreSQL 15 (Debian's
``postgres``, SCRAM) started by the setup, the ``amcheck`` extension installed in one
database and not in another. Nothing is faked. The failure is the exit status and the
``pg_amcheck: error: ...`` lines the tool writes, the server's text quoted in them; errors of the
checks themselves are reported per relation on stdout, with exit status 2."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from daemon_support import pg_bindir

from corpus_live.core import (
    AUTH,
    DEP,
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
from corpus_live.heldout2._daemons import PG_ADMIN_PW, postgres

_SETUP = """
CREATE DATABASE bare OWNER app;
CREATE ROLE checker LOGIN PASSWORD 'checker-pw';
"""

_APP = """
CREATE EXTENSION amcheck;
CREATE INDEX t_name ON t (name);
GRANT CONNECT ON DATABASE app TO checker;
GRANT SELECT ON t TO checker;
"""


@dataclass
class Amcheck:
    port: int
    binary: str


Ctx = Served[Amcheck]


def _psql(port: int, db: str, sql: str) -> None:
    subprocess.run(
        [
            "psql",
            "-h",
            LOOPBACK,
            "-p",
            str(port),
            "-U",
            "postgres",
            "-d",
            db,
            "-v",
            "ON_ERROR_STOP=1",
            "-q",
            "-f",
            "-",
        ],
        input=sql.encode(),
        check=True,
        capture_output=True,
        env=dict(os.environ, PGPASSWORD=PG_ADMIN_PW),
        timeout=30,
    )


def _start(stack: contextlib.ExitStack, work: Path) -> Amcheck:
    bindir = pg_bindir()
    if bindir is None or not (bindir / "pg_amcheck").exists():
        raise RuntimeError("not installed: pg_amcheck (postgresql, scripts/setup CP_APT_DEV)")
    pg = postgres(stack, work)
    _psql(pg.port, "postgres", _SETUP)
    _psql(pg.port, "app", _APP)
    return Amcheck(pg.port, str(bindir / "pg_amcheck"))


FAM = family(
    "pg_amcheck",
    "the pg_amcheck CLI against PostgreSQL 15 (Debian), real",
    served(_start),
    half="heldout16",
)


def _check(
    *args: str,
    db: str = "app",
    user: str = "postgres",
    password: str = PG_ADMIN_PW,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    options: str = "",
    lock: bool = False,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        argv = [c.server.binary, "-h", host, "-p", str(p), "-U", user, "--no-password", *args]
        env = dict(
            os.environ,
            PGPASSWORD=password,
            PGCONNECT_TIMEOUT="1",
            PGSSLMODE="disable",
            PGGSSENCMODE="disable",
            PGOPTIONS=options,
        )
        if not lock:
            subprocess.run([*argv, db], capture_output=True, check=True, timeout=15, env=env)
            return
        # another session holds an exclusive lock on the table while pg_amcheck runs
        holder = subprocess.Popen(
            [
                "psql",
                "-h",
                LOOPBACK,
                "-p",
                str(c.server.port),
                "-U",
                "postgres",
                "-d",
                db,
                "-q",
                "-c",
                "BEGIN; LOCK TABLE t IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3);",
            ],
            env=dict(os.environ, PGPASSWORD=PG_ADMIN_PW),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            threading.Event().wait(0.5)
            subprocess.run([*argv, db], capture_output=True, check=True, timeout=15, env=env)
        finally:
            holder.terminate()
            holder.wait(5)

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "password authentication failed for user postgres",
    _check(password="not-the-password"),
)
FAM.add(
    "nologin_role",
    AUTH,
    "role sleeper is not permitted to log in",
    _check(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for role single (CONNECTION LIMIT 0)",
    _check(user="single", password="single-pw"),
)
FAM.add(
    "missing_database",
    NF,
    "database ghost does not exist",
    _check(db="ghost"),
)
FAM.add(
    "no_amcheck_extension",
    DEP,
    "the amcheck extension is not installed in database bare: nothing to check",
    _check(db="bare"),
)
FAM.add(
    "missing_table",
    NF,
    "no relation matches --table ghost_table (strict names)",
    _check("--table=ghost_table"),
)
FAM.add(
    "missing_schema",
    NF,
    "no schema matches --schema ghost_schema (strict names)",
    _check("--schema=ghost_schema"),
)
FAM.add(
    "no_execute_privilege",
    AUTH,
    "role checker may read the table but not run amcheck's functions: permission denied, reported per relation on stdout (exit 2)",
    _check("--table=t", user="checker", password="checker-pw"),
)
FAM.add(
    "lock_timeout",
    TO,
    "lock_timeout 200 ms: another session holds an ACCESS EXCLUSIVE lock on the table; reported per relation on stdout (exit 2)",
    _check("--table=t", options="-c lock_timeout=200", lock=True),
)
FAM.add(
    "bad_jobs",
    INT,
    "pg_amcheck's own option check: --jobs 0 (the pack's input)",
    _check("--jobs=0"),
)
FAM.add(
    "bad_block_range",
    INT,
    "pg_amcheck's own option check: --startblock after --endblock",
    _check("--startblock=10", "--endblock=2"),
)
FAM.add("refused", NET, "nothing listens", _check(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve (.invalid)", _check(host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never answers (PGCONNECT_TIMEOUT=1)",
    _check(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the server closed the connection unexpectedly",
    _check(port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | INT,
    "a peer that speaks no PostgreSQL protocol",
    _check(port=lambda c: c.net.garbage),
)
