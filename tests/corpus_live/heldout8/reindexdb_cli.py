"""PostgreSQL's ``reindexdb`` CLI (Debian's ``postgresql-client``) run as a pack runs it, the
connection given as a libpq connection string in ``--dbname`` (password, ``connect_timeout``
and server ``options`` in it), against a real PostgreSQL (Debian's ``postgresql``, SCRAM
authentication). The failure is the exit status and ``reindexdb: error: ...`` on stderr, the
server's ``FATAL``/``ERROR`` text quoted in it; reindexdb's own checks of its options fail the
same way before any connection. Nothing is faked."""

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
    require("reindexdb", "psql")
    return postgres(stack, work)


FAM = family(
    "reindexdb",
    "the reindexdb CLI against PostgreSQL (Debian), real",
    served(_start),
    half="heldout8",
)


def _reindex(
    *args: str,
    user: str = "app",
    password: str = "app-pw",
    db: str = "app",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    options: str = "",
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        info = (
            f"host={host} port={p} user={user} password={password} dbname={db} "
            "connect_timeout=1 sslmode=disable"
        )
        if options:
            info += f" options='{options}'"
        cli(["reindexdb", "--dbname", info, *args], timeout=10)

    return run


def _locked(c: Ctx) -> None:
    import psycopg

    holder = psycopg.connect(
        host=LOOPBACK, port=c.server.port, user="app", password="app-pw", dbname="app"
    )
    try:
        holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")  # the transaction stays open
        _reindex("--table", "t", options="-c lock_timeout=400")(c)
    finally:
        holder.close()


def _statement_timeout(c: Ctx) -> None:
    import psycopg

    holder = psycopg.connect(
        host=LOOPBACK, port=c.server.port, user="app", password="app-pw", dbname="app"
    )
    try:
        holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        _reindex("--index", "t_pkey", options="-c statement_timeout=400")(c)
    finally:
        holder.close()


FAM.add(
    "wrong_password",
    AUTH,
    "password authentication failed for user app",
    _reindex(password="nope"),
)
FAM.add(
    "nologin_role",
    AUTH,
    "the role may not log in",
    _reindex(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "the role's connection limit is 0",
    _reindex(user="single", password="single-pw", db="postgres"),
)
FAM.add("unknown_database", NF, "no such database", _reindex(db="ledger"))
FAM.add("unknown_table", NF, "no such table", _reindex("--table", "invoices"))
FAM.add("unknown_index", NF, "no such index", _reindex("--index", "invoices_pkey"))
FAM.add("unknown_schema", NF, "no such schema", _reindex("--schema", "billing"))
FAM.add(
    "not_owner",
    AUTH,
    "app does not own the table it asks to reindex",
    _reindex("--table", "secret"),
)
FAM.add("lock_timeout", TO, "another session holds the table's lock", _locked)
FAM.add(
    "statement_timeout",
    TO,
    "statement_timeout fires while waiting on another session's lock",
    _statement_timeout,
)
FAM.add(
    "system_concurrently",
    INT,
    "the pack asks to reindex system catalogs concurrently",
    _reindex("--system", "--concurrently"),
)
FAM.add("zero_jobs", INT, "the pack's own --jobs is out of range", _reindex("--jobs", "0"))
FAM.add("refused", NET, "nothing listens", _reindex(port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _reindex(host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "server never answers the startup packet (connect_timeout=1)",
    _reindex(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "server closes the connection at once",
    _reindex(port=lambda c: c.net.close_now),
)
