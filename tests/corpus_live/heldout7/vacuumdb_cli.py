"""PostgreSQL's ``vacuumdb`` CLI (Debian's ``postgresql-client``) run as a pack runs it, the
connection given as a libpq connection string in ``--dbname`` (password, ``connect_timeout``
and server ``options`` in it), against a real PostgreSQL (Debian's ``postgresql``, SCRAM
authentication). The failure is the exit status and ``vacuumdb: error: ...`` on stderr, the
server's ``FATAL``/``ERROR`` text quoted in it; vacuumdb's own checks of its options fail the
same way before any connection."""

from __future__ import annotations

import contextlib
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
    cli,
    family,
    require,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    require("vacuumdb", "psql")
    return postgres(stack, work)


FAM = family(
    "vacuumdb",
    "the vacuumdb CLI against PostgreSQL (Debian), real",
    served(_start),
    half="heldout7",
)


def _conninfo(
    c: Ctx,
    *,
    user: str,
    password: str,
    db: str,
    host: str,
    port: Callable[[Ctx], int] | None,
    options: str,
) -> str:
    p = c.server.port if port is None else port(c)
    info = (
        f"host={host} port={p} user={user} password={password} dbname={db} "
        "connect_timeout=1 sslmode=disable"
    )
    return info + (f" options='{options}'" if options else "")


def _vacuum(
    *args: str,
    user: str = "app",
    password: str = "app-pw",
    db: str = "app",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    options: str = "",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        info = _conninfo(
            c, user=user, password=password, db=db, host=host, port=port, options=options
        )
        cli(["vacuumdb", "--dbname", info, *args], timeout=10)

    return run


def _locked(c: Ctx) -> None:
    import psycopg

    holder = psycopg.connect(
        host=LOOPBACK, port=c.server.port, user="app", password="app-pw", dbname="app"
    )
    try:
        holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")  # the transaction stays open
        _vacuum("--table", "t", "--full", options="-c lock_timeout=500")(c)
    finally:
        holder.close()


FAM.add(
    "wrong_password",
    AUTH,
    'FATAL: password authentication failed for user "app"',
    _vacuum(password="bad"),
)
FAM.add(
    "unknown_role",
    AUTH,
    "FATAL: password authentication failed for a role that does not exist",
    _vacuum(user="ghost", password="ghost-pw"),
)
FAM.add(
    "nologin_role",
    AUTH,
    'FATAL: role "sleeper" is not permitted to log in',
    _vacuum(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    'FATAL: too many connections for role "single" (CONNECTION LIMIT 0)',
    _vacuum(user="single", password="single-pw", db="postgres"),
)
FAM.add(
    "unknown_database",
    NF,
    'FATAL: database "warehouse" does not exist',
    _vacuum(db="warehouse"),
)
FAM.add(
    "unknown_table",
    NF,
    'ERROR: relation "public.orders" does not exist (--table)',
    _vacuum("--table", "public.orders"),
)
FAM.add(
    "unknown_column",
    NF | INT,
    'ERROR: column "price" of relation "t" does not exist (--analyze on t(price))',
    _vacuum("--analyze", "--table", "t(price)"),
)
FAM.add(
    "lock_timeout",
    TO,
    "ERROR: canceling statement due to lock timeout (another session holds an ACCESS EXCLUSIVE lock; lock_timeout 500 ms)",
    _locked,
)
FAM.add(
    "full_with_analyze_only",
    INT,
    'cannot use the "full" option when performing only analyze (the pack\'s options)',
    _vacuum("--analyze-only", "--full"),
)
FAM.add(
    "zero_jobs",
    INT,
    "-j/--jobs must be in range (the pack's options)",
    _vacuum("--jobs", "0"),
)
FAM.add(
    "bad_option",
    INT,
    "unrecognized option '--no-such-flag' (the pack's own argv)",
    _vacuum("--no-such-flag"),
)
FAM.add("refused", NET, "Connection refused", _vacuum(port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    'could not translate host name "no-such-host.invalid" to address',
    _vacuum(host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "timeout expired: no answer to the startup packet (connect_timeout=1)",
    _vacuum(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "server closed the connection unexpectedly",
    _vacuum(port=lambda c: c.net.close_now),
)
