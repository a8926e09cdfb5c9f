"""PostgreSQL's ``pg_dumpall`` CLI (Debian's ``postgresql-client``) run as a pack runs it (the
password in ``PGPASSWORD``, ``PGCONNECT_TIMEOUT=1``, no SSL, output to a file, a subprocess
deadline) against a real PostgreSQL (Debian's ``postgresql``, SCRAM authentication, started
by the family's setup in its own scratch directory). The failure is the exit status and
``pg_dumpall: error: ...`` on stderr. Nothing is faked."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
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
from corpus_live.heldout2._daemons import PG_ADMIN_PW, postgres


@dataclass
class Dump:
    port: int
    out: Path


Ctx = Served[Dump]


def _start(stack: contextlib.ExitStack, work: Path) -> Dump:
    require("pg_dumpall", "psql")
    pg = postgres(stack, work)
    out = work / "out"
    out.mkdir()
    return Dump(pg.port, out)


FAM = family(
    "pg_dumpall",
    "the pg_dumpall CLI against PostgreSQL (Debian), real",
    served(_start),
    half="heldout14",
)


def _dump(
    *args: str,
    user: str = "postgres",
    password: str = PG_ADMIN_PW,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    target: str | None = None,
    deadline: float = 20.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        out = target if target is not None else str(c.server.out / "all.sql")
        subprocess.run(
            ["pg_dumpall", "-h", host, "-p", str(p), "-U", user, "-w", "-f", out, *args],
            capture_output=True,
            check=True,
            timeout=deadline,
            env=dict(
                os.environ,
                PGPASSWORD=password,
                PGCONNECT_TIMEOUT="1",
                PGSSLMODE="disable",
                PGGSSENCMODE="disable",
            ),
        )

    return run


FAM.add("wrong_password", AUTH, "password authentication failed", _dump(password="nope"))
FAM.add("unknown_role", AUTH, "the role ghost does not exist", _dump(user="ghost"))
FAM.add(
    "nologin_role",
    AUTH,
    "the role may not log in",
    _dump(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for the role (limit 0)",
    _dump(user="single", password="single-pw"),
)
FAM.add(
    "not_superuser",
    AUTH,
    "a role that is no superuser reads the roles' passwords",
    _dump("--roles-only", user="app", password="app-pw"),
)
FAM.add(
    "not_superuser_data",
    AUTH,
    "a role that is no superuser dumps every database: a table it may not read",
    _dump("--no-role-passwords", user="app", password="app-pw"),
)
FAM.add(
    "missing_database",
    NF,
    "-l names a database that does not exist",
    _dump("--globals-only", "-l", "ghost"),
)
FAM.add(
    "output_dir_missing",
    INT | NF,
    "-f names a file in a directory that does not exist",
    _dump("--globals-only", target="/nonexistent-corpus44/dir/all.sql"),
)
FAM.add(
    "bad_option",
    INT,
    "pg_dumpall's own check: an option it does not have",
    _dump("--format=custom"),
)
FAM.add(
    "conflicting_options",
    INT,
    "pg_dumpall's own check: -g and -r together",
    _dump("--globals-only", "--roles-only"),
)
FAM.add("refused", NET, "nothing listens", _dump(port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _dump(host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: the pack's 1.5 s subprocess deadline expires first",
    _dump(port=lambda c: c.net.silent, deadline=1.5),
)
FAM.add(
    "dropped",
    NET,
    "the server closes the connection at once",
    _dump(port=lambda c: c.net.close_now),
)
