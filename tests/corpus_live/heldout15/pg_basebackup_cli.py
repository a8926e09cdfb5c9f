"""The ``pg_basebackup`` CLI (Debian's postgresql-client 15) run as a pack runs it, a command on
argv with a libpq connection string, against a real PostgreSQL 15 (Debian's ``postgres``, SCRAM,
roles with and without replication rights) started by the setup. Each case backs up into a
directory of its own, removed afterwards. The failure is the exit status and the
``pg_basebackup: error: ...`` lines the tool writes."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
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


def _start(stack: Any, work: Any) -> Postgres:
    require("pg_basebackup")
    return postgres(stack, work)


FAM = family(
    "pg_basebackup",
    "the pg_basebackup CLI against PostgreSQL 15 (Debian), real",
    served(_start),
    half="heldout15",
)


def _bb(
    *extra: str,
    user: str = "postgres",
    password: str = PG_ADMIN_PW,
    host: str = LOOPBACK,
    port: Any = None,
    occupied: bool = False,
    timeout: float = 10.0,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        dsn = f"host={host} port={p} user={user} password={password} connect_timeout=2"
        with tempfile.TemporaryDirectory(prefix="corpus44-pgbb-") as tmp:
            target = Path(tmp) / "base"
            if occupied:
                target.mkdir()
                (target / "PG_VERSION").write_text("15\n")
            argv = ["pg_basebackup", "-d", dsn, "-D", str(target), "-w", "-X", "none"]
            cli(argv + list(extra), timeout=timeout)

    return run


FAM.add("wrong_password", AUTH, "SCRAM authentication fails", _bb(password="not-it"))
FAM.add("unknown_role", AUTH, "a role that does not exist", _bb(user="ghost", password="x"))
FAM.add(
    "no_replication_right",
    AUTH,
    "the app role has no REPLICATION attribute",
    _bb(user="app", password="app-pw"),
)
FAM.add(
    "nologin_role",
    AUTH,
    "the role may not log in",
    _bb(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "target_not_empty",
    EXISTS | INT,
    "the backup directory exists and holds files",
    _bb(occupied=True),
)
FAM.add(
    "bad_option",
    INT,
    "the pack passes a compression level the tool rejects",
    _bb("-Z", "gzip:level=99", "-F", "t"),
)
FAM.add("refused", NET, "nothing listens", _bb(port=lambda c: c.net.closed))
FAM.add("dns", NET, "host does not resolve", _bb(host=UNRESOLVABLE, port=lambda c: 5432))
FAM.add(
    "silent",
    TO,
    "server never answers the startup packet: connect_timeout expires",
    _bb(port=lambda c: c.net.silent),
)
FAM.add("dropped", NET, "the peer closes at once", _bb(port=lambda c: c.net.close_now))
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not PostgreSQL",
    _bb(port=lambda c: c.net.garbage),
)
