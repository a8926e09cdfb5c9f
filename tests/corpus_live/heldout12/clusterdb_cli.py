"""PostgreSQL's ``clusterdb`` CLI (Debian's ``postgresql-client``) run as a pack runs it, the
connection given in libpq's environment variables (``PGHOST``, ``PGPORT``, ``PGUSER``,
``PGPASSWORD``, ``PGCONNECT_TIMEOUT``, ``PGOPTIONS``), against a real PostgreSQL (Debian's
``postgresql``, SCRAM authentication). Nothing is faked but the transport failures. The
failure is the exit status and ``clusterdb: error: ...`` on stderr."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

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
    family,
    require,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    require("clusterdb", "psql")
    return postgres(stack, work)


FAM = family(
    "clusterdb",
    "the clusterdb CLI against PostgreSQL (Debian), real",
    served(_start),
    half="heldout12",
)


def _cluster(
    *args: str,
    user: str = "app",
    password: str = "app-pw",
    db: str = "app",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    options: str = "",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        env = dict(
            os.environ,
            PGHOST=host,
            PGPORT=str(c.server.port if port is None else port(c)),
            PGUSER=user,
            PGPASSWORD=password,
            PGDATABASE=db,
            PGCONNECT_TIMEOUT="1",
            PGSSLMODE="disable",
        )
        if options:
            env["PGOPTIONS"] = options
        subprocess.run(["clusterdb", *args], env=env, capture_output=True, check=True, timeout=10)

    return run


def _locked(c: Ctx) -> None:
    import psycopg

    holder = psycopg.connect(
        host=LOOPBACK, port=c.server.port, user="app", password="app-pw", dbname="app"
    )
    try:
        holder.execute("CLUSTER t USING t_pkey")
        holder.commit()
        holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")  # the transaction stays open
        _cluster("--table", "t", options="-c lock_timeout=500")(c)
    finally:
        holder.close()


FAM.add(
    "wrong_password",
    AUTH,
    'FATAL: password authentication failed for user "app"',
    _cluster(password="wrong"),
)
FAM.add(
    "unknown_role",
    AUTH,
    "FATAL: password authentication failed for a role that does not exist",
    _cluster(user="nobody_here", password="x"),
)
FAM.add(
    "nologin_role",
    AUTH,
    'FATAL: role "sleeper" is not permitted to log in',
    _cluster(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    'FATAL: too many connections for role "single" (CONNECTION LIMIT 0)',
    _cluster(user="single", password="single-pw", db="postgres"),
)
FAM.add(
    "unknown_database",
    NF,
    'FATAL: database "reports" does not exist',
    _cluster(db="reports"),
)
FAM.add(
    "unknown_table",
    NF,
    'ERROR: relation "invoices" does not exist (--table)',
    _cluster("--table", "invoices"),
)
FAM.add(
    "not_owner",
    AUTH,
    "ERROR: must be owner of table secret (app clusters the admin's table)",
    _cluster("--table", "secret"),
)
FAM.add(
    "never_clustered",
    INT,
    'ERROR: there is no previously clustered index for table "secret" (as the admin)',
    _cluster("--table", "secret", user="postgres", password="pg-admin-pw"),
)
FAM.add(
    "lock_timeout",
    TO,
    "ERROR: canceling statement due to lock timeout (another session holds the table; "
    "lock_timeout 500 ms)",
    _locked,
)
FAM.add(
    "all_and_table",
    INT,
    "cannot cluster specific table(s) in all databases (the pack's options)",
    _cluster("--all", "--table", "t"),
)
FAM.add(
    "bad_option",
    INT,
    "unrecognized option '--concurrently' (the pack's own argv)",
    _cluster("--concurrently"),
)
FAM.add("refused", NET, "Connection refused", _cluster(port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    'could not translate host name "no-such-host.invalid" to address',
    _cluster(host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "timeout expired: no answer to the startup packet (PGCONNECT_TIMEOUT=1)",
    _cluster(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "server closed the connection unexpectedly",
    _cluster(port=lambda c: c.net.close_now),
)
