"""PostgreSQL's ``createuser`` and ``dropuser`` CLIs (Debian's ``postgresql-client``) run as a
pack runs them (``-w``, the password in ``PGPASSWORD``, ``PGCONNECT_TIMEOUT=1``, no SSL, a
subprocess deadline), against a real PostgreSQL (Debian's ``postgresql``, SCRAM
authentication). The failure is the exit status and ``createuser: error: ...`` /
``dropuser: error: ...`` on stderr, the server's text quoted in it; the tools' own checks of
their options fail the same way before any connection. Nothing is faked."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
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
from corpus_live.heldout2._daemons import PG_ADMIN_PW, Postgres, postgres

Ctx = Served[Postgres]


def _start(stack: contextlib.ExitStack, work: Path) -> Postgres:
    require("createuser", "dropuser", "psql")
    return postgres(stack, work)


FAM = family(
    "createuser",
    "the createuser/dropuser CLIs against PostgreSQL (Debian), real",
    served(_start),
    half="heldout9",
)


def _tool(
    tool: str,
    *args: str,
    user: str = "postgres",
    password: str = PG_ADMIN_PW,
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    deadline: float = 20.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        subprocess.run(
            [tool, "-w", "-h", host, "-p", str(p), "-U", user, *args],
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


FAM.add(
    "wrong_password",
    AUTH,
    "password authentication failed",
    _tool("createuser", "newbie", password="nope"),
)
FAM.add(
    "no_createrole",
    AUTH,
    "app lacks CREATEROLE: permission denied to create role",
    _tool("createuser", "newbie", user="app", password="app-pw"),
)
FAM.add(
    "nologin_role",
    AUTH,
    "the role may not log in",
    _tool("createuser", "newbie", user="sleeper", password="sleeper-pw"),
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    "too many connections for the role (limit 0)",
    _tool("dropuser", "newbie", user="single", password="single-pw"),
)
FAM.add("role_exists", EXISTS, "role app already exists", _tool("createuser", "app"))
FAM.add(
    "drop_missing_role",
    NF,
    "dropuser of a role that does not exist",
    _tool("dropuser", "ghost_role"),
)
FAM.add(
    "member_of_missing_role",
    NF | INT,
    "createuser -g of a group role that does not exist",
    _tool("createuser", "-g", "ghost_group", "newbie2"),
)
FAM.add(
    "drop_owner",
    INT,
    "app owns the database app: objects depend on the role",
    _tool("dropuser", "app"),
)
FAM.add(
    "drop_self",
    INT,
    "the session user cannot drop itself",
    _tool("dropuser", "postgres"),
)
FAM.add(
    "reserved_name",
    INT,
    "role names starting with pg_ are reserved",
    _tool("createuser", "pg_mine"),
)
FAM.add(
    "bad_connection_limit",
    INT,
    "createuser's own check: -c is not an integer",
    _tool("createuser", "-c", "lots", "newbie3"),
)
FAM.add(
    "refused",
    NET,
    "nothing listens",
    _tool("createuser", "newbie", port=lambda c: c.net.closed),
)
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _tool("createuser", "newbie", host=UNRESOLVABLE, port=lambda c: 5432),
)
FAM.add(
    "silent",
    TO,
    "the server never answers: the pack's 1.5 s subprocess deadline expires first",
    _tool("createuser", "newbie", port=lambda c: c.net.silent, deadline=1.5),
)
FAM.add(
    "dropped",
    NET,
    "closed at once",
    _tool("dropuser", "newbie", port=lambda c: c.net.close_now),
)
