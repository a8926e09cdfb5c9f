"""MariaDB's ``mariadb-show`` CLI (Debian's ``mariadb-client``: databases, tables, columns
and indexes of a schema) run as a pack runs it, options on argv, against a real MariaDB
(Debian's ``mariadb-server``: per-user connection and query limits, a locked account,
table-level grants). Nothing is faked but the transport failures. The failure is the exit
status and ``mariadb-show: ...`` with the server's error text on stderr."""

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
from corpus_live.servers import MariaDB, mariadb

Ctx = Served[MariaDB]


def _start(stack: contextlib.ExitStack, work: Path) -> MariaDB:
    require("mariadb-show")
    return mariadb(stack, work)


FAM = family(
    "mariadb-show",
    "the mariadb-show CLI against MariaDB (Debian), real",
    served(_start),
    half="heldout12",
)


def _argv(
    c: Ctx, user: str, password: str, host: str, port: int, args: tuple[str, ...]
) -> list[str]:
    return [
        "mariadb-show",
        "--no-defaults",
        f"--host={host}",
        f"--port={port}",
        "--protocol=TCP",
        f"--user={user}",
        f"--password={password}",
        *args,
    ]


def _show(
    *args: str,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    before: tuple[str, ...] | None = None,
    timeout: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        if before is not None:  # the state the failing run meets (its own outcome is not the case)
            import subprocess

            subprocess.run(
                _argv(c, user, password, host, p, before), check=False, capture_output=True
            )
        cli(_argv(c, user, password, host, p, args), timeout=timeout)

    return run


def _held(c: Ctx) -> None:
    import pymysql  # type: ignore[import-untyped]

    holder = pymysql.connect(**c.server.kw(user="single", password="single-pw"))
    try:
        _show("app", user="single", password="single-pw")(c)
    finally:
        holder.close()


FAM.add(
    "wrong_password",
    AUTH,
    "Access denied for user 'app' (using password: YES)",
    _show("app", password="nope"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "Access denied for a user the server does not know",
    _show("app", user="intruder", password="x"),
)
FAM.add(
    "account_locked",
    AUTH,
    "Access denied, this account is locked",
    _show("app", user="locked", password="locked-pw"),
)
FAM.add(
    "max_user_connections",
    RL | QUOTA,
    "User 'single' has exceeded the 'max_user_connections' resource (another session holds it)",
    _held,
)
FAM.add(
    "max_queries_per_hour",
    QUOTA | RL,
    "User 'hourly' has exceeded the 'max_queries_per_hour' resource (a run before used it)",
    _show("app", user="hourly", password="hourly-pw", before=("app",)),
)
FAM.add(
    "unknown_database",
    NF,
    "Unknown database 'billing' (a user with global SELECT)",
    _show("billing", user="wide", password="wide-pw"),
)
FAM.add(
    "database_denied",
    AUTH,
    "Access denied for user 'limited' to database 'other'",
    _show("other", user="limited", password="limited-pw"),
)
FAM.add(
    "unknown_table",
    NF,
    "Table 'app.orders' doesn't exist (its columns asked)",
    _show("app", "orders"),
)
FAM.add(
    "table_denied",
    AUTH,
    "the limited user, granted app.t only, asks for app.secret's columns",
    _show("app", "secret", user="limited", password="limited-pw"),
)
FAM.add(
    "bad_option",
    INT,
    "unknown option '--verbose-tables' (the pack's own argv)",
    _show("--verbose-tables", "app"),
)
FAM.add(
    "refused", NET, "Can't connect to server (nothing listens)", _show(port=lambda c: c.net.closed)
)
FAM.add(
    "dns",
    NET,
    "Unknown server host 'no-such-host.invalid'",
    _show(host=UNRESOLVABLE, port=lambda c: 3306),
)
FAM.add(
    "silent",
    TO,
    "no handshake ever comes (mariadb-show has no connect timeout): the pack's 2 s deadline",
    _show(port=lambda c: c.net.silent, timeout=2),
)
FAM.add(
    "dropped",
    NET,
    "Lost connection to server at 'handshake' (closed at once)",
    _show(port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are no MariaDB handshake",
    _show(port=lambda c: c.net.garbage),
)
