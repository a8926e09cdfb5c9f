"""PostgreSQL's ``pg_receivewal`` CLI (Debian's postgresql-client 15) run as a pack runs it, a
command on argv with a libpq connection string (``connect_timeout=1``, the password in it,
``-w``) and a deadline of its own, against a real PostgreSQL 15 (Debian's ``postgres``, SCRAM,
roles with and without the REPLICATION attribute, one physical replication slot) started by
the setup. Each case streams into a directory of its own. Nothing is faked. The failure is
the exit status and the ``pg_receivewal: error: ...`` lines the tool writes, the server's
text quoted in them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
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

_SETUP = """
CREATE ROLE replicator LOGIN REPLICATION PASSWORD 'replicator-pw';
SELECT pg_create_physical_replication_slot('taken');
"""


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    require("pg_receivewal", "psql")
    pg = postgres(stack, work)
    subprocess.run(
        [
            "psql",
            "-h",
            LOOPBACK,
            "-p",
            str(pg.port),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
            "-q",
            "-f",
            "-",
        ],
        input=_SETUP.encode(),
        check=True,
        capture_output=True,
        env=dict(os.environ, PGPASSWORD=PG_ADMIN_PW),
        timeout=30,
    )
    return pg


FAM = family(
    "pg_receivewal",
    "the pg_receivewal CLI against PostgreSQL 15 (Debian), real",
    served(_start),
    half="heldout16",
)


def _recv(
    *extra: str,
    user: str = "replicator",
    password: str = "replicator-pw",
    host: str = LOOPBACK,
    port: Any = None,
    target: str | None = "",
    timeout: float = 10.0,
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        dsn = f"host={host} port={p} user={user} password={password} connect_timeout=1"
        with tempfile.TemporaryDirectory(prefix="corpus44-pgrecv-") as tmp:
            argv = ["pg_receivewal", "-d", dsn, "-w", "-n"]
            if target is not None:
                argv += ["-D", target or tmp]
            cli(argv + list(extra), timeout=timeout)

    return run


FAM.add("wrong_password", AUTH, "SCRAM authentication fails", _recv(password="not-it"))
FAM.add("unknown_role", AUTH, "a role that does not exist", _recv(user="ghost", password="x"))
FAM.add(
    "no_replication_right",
    AUTH,
    "the app role has no REPLICATION attribute: no walsender for it",
    _recv(user="app", password="app-pw"),
)
FAM.add(
    "nologin_role",
    AUTH,
    "the role may not log in",
    _recv(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "missing_slot",
    NF,
    "streaming from a replication slot that does not exist",
    _recv("--slot=ghost_slot"),
)
FAM.add(
    "create_slot_exists",
    EXISTS,
    "--create-slot of a slot that is already there",
    _recv("--create-slot", "--slot=taken"),
)
FAM.add(
    "drop_slot_missing",
    NF,
    "--drop-slot of a slot that does not exist",
    _recv("--drop-slot", "--slot=ghost_slot"),
)
FAM.add(
    "missing_target_dir",
    NF,
    "the target directory does not exist",
    _recv(target="/nonexistent/corpus44/wal"),
)
FAM.add(
    "no_target_dir",
    INT,
    "the pack forgot -D: no target directory specified",
    _recv(target=None),
)
FAM.add(
    "bad_compression",
    INT,
    "the pack passes a compression level the tool rejects",
    _recv("--compress=gzip:level=99"),
)
FAM.add("refused", NET, "nothing listens", _recv(port=lambda c: c.net.closed))
FAM.add(
    "dns", NET, "host does not resolve (.invalid)", _recv(host=UNRESOLVABLE, port=lambda c: 5432)
)
FAM.add(
    "silent",
    TO,
    "server never answers the startup packet: connect_timeout expires",
    _recv(port=lambda c: c.net.silent),
)
FAM.add("dropped", NET, "the peer closes at once", _recv(port=lambda c: c.net.close_now))
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not PostgreSQL",
    _recv(port=lambda c: c.net.garbage),
)
