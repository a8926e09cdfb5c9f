"""PostgreSQL's ``pgbench`` CLI (Debian's ``postgresql-client``) run as a pack runs it (the
password in ``PGPASSWORD``, ``PGCONNECT_TIMEOUT=1``, no SSL, one transaction, a subprocess
deadline) against a real PostgreSQL (Debian's ``postgresql``, SCRAM authentication): the
built-in benchmark and custom scripts (``-f``) written to the family's scratch directory. The
failure is the exit status and ``pgbench: error: ...`` on stderr, the server's text quoted in
it; pgbench's own checks of its options fail the same way before any connection. Nothing is
faked."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
from corpus_live.heldout2._daemons import postgres


@dataclass
class Bench:
    port: int
    scripts: Path


Ctx = Served[Bench]

_SCRIPTS = {
    "syntax.sql": "SELEC 1;\n",
    "dup.sql": "INSERT INTO t VALUES (1, 'one');\n",
    "secret.sql": "SELECT * FROM secret;\n",
    "sleep.sql": "SELECT pg_sleep(5);\n",
    "divzero.sql": "\\set x 1 / 0\nSELECT :x;\n",
}


def _start(stack: contextlib.ExitStack, work: Path) -> Bench:
    require("pgbench", "psql")
    pg = postgres(stack, work)
    scripts = work / "scripts"
    scripts.mkdir()
    for name, text in _SCRIPTS.items():
        (scripts / name).write_text(text)
    return Bench(pg.port, scripts)


FAM = family(
    "pgbench",
    "the pgbench CLI against PostgreSQL (Debian), real",
    served(_start),
    half="heldout10",
)


def _bench(
    *args: str,
    db: str = "app",
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    script: str | None = None,
    options: str = "",
    deadline: float = 20.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        extra = ["-n", "-t", "1", "-f", str(c.server.scripts / script)] if script else []
        subprocess.run(
            ["pgbench", "-h", host, "-p", str(p), "-U", user, *extra, *args, db],
            capture_output=True,
            check=True,
            timeout=deadline,
            env=dict(
                os.environ,
                PGPASSWORD=password,
                PGCONNECT_TIMEOUT="1",
                PGSSLMODE="disable",
                PGGSSENCMODE="disable",
                PGOPTIONS=options,
            ),
        )

    return run


FAM.add("wrong_password", AUTH, "password authentication failed", _bench("-i", password="nope"))
FAM.add(
    "nologin_role",
    AUTH,
    "the role may not log in",
    _bench("-i", user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for the role (limit 0)",
    _bench("-i", user="single", password="single-pw"),
)
FAM.add("missing_database", NF, "database ghost does not exist", _bench("-i", db="ghost"))
FAM.add(
    "schema_public_denied",
    AUTH,
    "pgbench -i as a role that may not create tables in app's public schema",
    _bench("-i", user="maker", password="maker-pw"),
)
FAM.add(
    "not_initialized",
    NF | INT,
    "the built-in benchmark on a database never initialized: pgbench_branches missing",
    _bench("-n", "-t", "1"),
)
FAM.add(
    "table_denied",
    AUTH,
    "a custom script reads a table the role has no privilege on",
    _bench(script="secret.sql"),
)
FAM.add(
    "duplicate_key",
    EXISTS | INT,
    "a custom script inserts a row whose primary key exists",
    _bench(script="dup.sql"),
)
FAM.add("sql_syntax", INT, "a custom script with an SQL syntax error", _bench(script="syntax.sql"))
FAM.add(
    "division_by_zero",
    INT,
    "a \\set meta-command divides by zero",
    _bench(script="divzero.sql"),
)
FAM.add(
    "statement_timeout",
    TO,
    "statement_timeout 300ms cancels a 5 s script statement",
    _bench(script="sleep.sql", options="-c statement_timeout=300"),
)
FAM.add(
    "missing_script",
    INT | NF,
    "-f names a script file that does not exist",
    _bench(script="nowhere.sql"),
)
FAM.add(
    "bad_clients",
    INT,
    "pgbench's own check: -c is not a number",
    _bench("-c", "lots", "-t", "1"),
)
FAM.add("refused", NET, "nothing listens", _bench("-i", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _bench("-i", host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: the pack's 1.5 s subprocess deadline expires first",
    _bench("-i", port=lambda c: c.net.silent, deadline=1.5),
)
