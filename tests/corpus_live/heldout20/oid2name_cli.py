"""PostgreSQL's ``oid2name`` CLI (Debian's postgresql-contrib 15, in the server's bindir, not
on PATH) run as a pack runs it, a command on argv whose ``-d`` is a libpq connection string
(the password in it, ``connect_timeout=1``), against a real PostgreSQL 15 (Debian's
``postgres``, SCRAM) started by the setup: roles that may not log in or have no connection
left, a database closed to PUBLIC, one that accepts no connections at all. Nothing is faked.
The failure is the exit status and the ``oid2name: error: ...`` line the tool writes, the
server's text quoted in it."""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon_support import pg_bindir

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
    served,
)
from corpus_live.heldout2._daemons import PG_ADMIN_PW, postgres


@dataclass
class Oid2name:
    port: int
    tool: str


_SETUP = """
CREATE DATABASE closed OWNER postgres;
REVOKE CONNECT ON DATABASE closed FROM PUBLIC;
CREATE DATABASE frozen OWNER app;
ALTER DATABASE frozen ALLOW_CONNECTIONS false;
"""


def _start(stack: contextlib.ExitStack, work: Path) -> Oid2name:
    bindir = pg_bindir()
    if bindir is None or not (bindir / "oid2name").exists():
        raise RuntimeError("oid2name is not installed (postgresql-contrib, CP_APT_DEV)")
    pg = postgres(stack, work)
    subprocess.run(
        [
            *("psql", "-h", LOOPBACK, "-p", str(pg.port), "-U", "postgres", "-d", "postgres"),
            *("-v", "ON_ERROR_STOP=1", "-q", "-f", "-"),
        ],
        input=_SETUP.encode(),
        check=True,
        capture_output=True,
        env=dict(os.environ, PGPASSWORD=PG_ADMIN_PW),
        timeout=30,
    )
    return Oid2name(pg.port, str(bindir / "oid2name"))


Ctx = Served[Oid2name]

FAM = family(
    "oid2name",
    "the oid2name CLI against PostgreSQL 15 (Debian), real",
    served(_start),
    half="heldout20",
)


def _o2n(
    *extra: str,
    db: str = "app",
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Any = None,
    conn_extra: str = "",
) -> Any:
    def run(c: Ctx) -> None:
        p = port(c) if port is not None else c.server.port
        conninfo = (
            f"host={host} port={p} user={user} password={password} dbname={db} "
            f"connect_timeout=1 sslmode=disable gssencmode=disable {conn_extra}".strip()
        )
        subprocess.run(
            [c.server.tool, "-d", conninfo, *extra],
            capture_output=True,
            check=True,
            timeout=15,
            env={k: v for k, v in os.environ.items() if not k.startswith("PG")},
        )

    return run


FAM.add("wrong_password", AUTH, "SCRAM password authentication fails", _o2n(password="nope"))
FAM.add("unknown_role", AUTH, "a role that does not exist", _o2n(user="ghost", password="x"))
FAM.add(
    "nologin_role",
    AUTH,
    "the role is not permitted to log in",
    _o2n(user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for the role (CONNECTION LIMIT 0)",
    _o2n(user="single", password="single-pw"),
)
FAM.add("missing_database", NF, "the database does not exist", _o2n(db="ghostdb"))
FAM.add(
    "no_connect_privilege",
    AUTH,
    "CONNECT on the database is revoked from PUBLIC: permission denied for database",
    _o2n(db="closed"),
)
FAM.add(
    "not_accepting_connections",
    INT | AUTH,
    "the database is set ALLOW_CONNECTIONS false: it is not currently accepting connections",
    _o2n(db="frozen"),
)
FAM.add(
    "bad_connection_option",
    INT,
    "the pack puts an option libpq does not know in the connection string",
    _o2n(conn_extra="compression=on"),
)
FAM.add("bad_flag", INT, "the pack passes a flag oid2name does not have", _o2n("--no-such-flag"))
FAM.add(
    "extra_argument",
    INT,
    "the pack passes a positional argument oid2name does not take",
    _o2n("t"),
)
FAM.add("refused", NET, "nothing listens", _o2n(port=lambda c: c.net.closed))
FAM.add(
    "dns", NET, "host does not resolve (.invalid)", _o2n(host=UNRESOLVABLE, port=lambda c: 5432)
)
FAM.add(
    "silent",
    TO,
    "the server never answers the startup packet: connect_timeout expires",
    _o2n(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "the server closed the connection unexpectedly",
    _o2n(port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are no PostgreSQL protocol message",
    _o2n(port=lambda c: c.net.garbage),
)
