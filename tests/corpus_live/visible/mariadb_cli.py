"""The ``mariadb`` command-line client (Debian's mariadb-client) against a real MariaDB:
the pack sees ``CalledProcessError`` with the client's stderr (``ERROR 1045 (28000): ...``)."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    DEP,
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
    served,
)
from corpus_live.servers import MariaDB, mariadb

Ctx = Served[MariaDB]


FAM = family(
    "mariadb-cli",
    "the mariadb client against MariaDB 10.11 (Debian), real",
    served(mariadb),
    half="visible",
)


def _q(
    sql: str = "SELECT 1",
    *,
    user: str = "app",
    password: str = "app-pw",
    db: str | None = "app",
    port: Any = None,
    host: str = LOOPBACK,
    extra: tuple[str, ...] = (),
) -> Any:
    def run(ctx: Ctx) -> None:
        p = ctx.server.port if port is None else port(ctx)
        argv = [
            "mariadb",
            "--no-defaults",
            f"--host={host}",
            f"--port={p}",
            f"--user={user}",
            f"--password={password}",
            "--connect-timeout=1",
            *extra,
            "-e",
            sql,
        ]
        if db:
            argv.append(db)
        cli(argv)

    return run


FAM.add("wrong_password", AUTH, "ERROR 1045 access denied", _q(password="nope"))
FAM.add("unknown_user", AUTH, "ERROR 1045 (no such user)", _q(user="ghost"))
FAM.add(
    "db_denied",
    AUTH,
    "ERROR 1044 access denied to database",
    _q(user="limited", password="limited-pw", db="other"),
)
FAM.add(
    "no_database",
    NF,
    "ERROR 1049 unknown database (a user whose grants cover it: others are told 1044)",
    _q(user="wide", password="wide-pw", db="ghostdb"),
)
FAM.add("no_table", NF, "ERROR 1146 table doesn't exist", _q("SELECT * FROM ghost_t"))
FAM.add("syntax", INT, "ERROR 1064 syntax", _q("SELEC 1"))
FAM.add("duplicate", EXISTS, "ERROR 1062 duplicate entry", _q("INSERT INTO t VALUES (1, 'd')"))
FAM.add(
    "select_denied",
    AUTH,
    "ERROR 1142 command denied",
    _q("SELECT * FROM app.secret", user="limited", password="limited-pw"),
)
FAM.add(
    "statement_time",
    TO,
    "ERROR 1969 max_statement_time",
    _q("SET STATEMENT max_statement_time=0.2 FOR SELECT SLEEP(3)"),
)
FAM.add("refused", NET, "ERROR 2002/2003 can't connect", _q(port=lambda c: c.net.closed))
FAM.add("dns", NET, "ERROR 2005 unknown server host", _q(host=UNRESOLVABLE, port=lambda c: 3306))
FAM.add("dropped", NET, "ERROR 2013 lost connection", _q(port=lambda c: c.net.close_now))
FAM.add(
    "silent",
    TO,
    "connect timeout (ERROR 2013 at reading initial packet)",
    _q(port=lambda c: c.net.silent),
)
FAM.add(
    "not_installed",
    DEP,
    "the client program is not installed",
    lambda c: cli(["mariadb-not-installed-x", "-e", "SELECT 1"]),
)
