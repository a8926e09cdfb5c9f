"""PostgreSQL's ``createdb``/``dropdb`` CLIs (Debian's postgresql-client) against a real
PostgreSQL: the pack sees ``CalledProcessError`` with the tool's stderr (``createdb: error:
database creation failed: ERROR:  ...``, ``connection to server ... failed: FATAL:  ...``)."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from corpus_live.core import (
    AUTH,
    EXISTS,
    INT,
    LOOPBACK,
    NET,
    NF,
    RL,
    TO,
    UNRESOLVABLE,
    Served,
    family,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]

FAM = family(
    "createdb",
    "createdb/dropdb against PostgreSQL 15 (Debian), real",
    served(postgres),
    half="heldout2",
)


def _tool(
    prog: str,
    *args: str,
    user: str = "maker",
    password: str = "maker-pw",
    host: str = LOOPBACK,
    port: Any = None,
) -> Any:
    def run(ctx: Ctx) -> None:
        p = ctx.server.port if port is None else port(ctx)
        subprocess.run(
            [prog, "-h", host, "-p", str(p), "-U", user, "-w", *args],
            capture_output=True,
            check=True,
            timeout=15,
            env=dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT="1"),
        )

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "FATAL: password authentication failed",
    _tool("createdb", "newdb1", password="nope"),
)
FAM.add(
    "unknown_role",
    AUTH,
    "FATAL: password authentication failed for a role that does not exist",
    _tool("createdb", "newdb2", user="ghost", password="x"),
)
FAM.add(
    "no_createdb_right",
    AUTH,
    "ERROR: permission denied to create database (the role lacks CREATEDB)",
    _tool("createdb", "newdb3", user="app", password="app-pw"),
)
FAM.add("exists", EXISTS, 'ERROR: database "app" already exists', _tool("createdb", "app"))
FAM.add(
    "no_template",
    NF,
    'ERROR: template database "ghost_tpl" does not exist',
    _tool("createdb", "-T", "ghost_tpl", "newdb4"),
)
FAM.add("drop_missing", NF, 'ERROR: database "ghostdb" does not exist', _tool("dropdb", "ghostdb"))
FAM.add(
    "drop_not_owner",
    AUTH,
    "ERROR: must be owner of database app",
    _tool("dropdb", "app"),
)
FAM.add(
    "bad_encoding",
    INT,
    "createdb's own check: not a valid encoding name (the pack's input)",
    _tool("createdb", "-E", "BOGUS8", "newdb5"),
)
FAM.add(
    "connection_limit",
    RL | NET,
    'FATAL: too many connections for role "single": retry when a slot frees',
    _tool("createdb", "newdb6", user="single", password="single-pw"),
)
FAM.add("refused", NET, "Connection refused", _tool("createdb", "x", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "could not translate host name",
    _tool("createdb", "x", host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "timeout expired (PGCONNECT_TIMEOUT=1)",
    _tool("createdb", "x", port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "server closed the connection unexpectedly",
    _tool("createdb", "x", port=lambda c: c.net.close_now),
)
