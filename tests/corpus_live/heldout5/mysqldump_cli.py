"""The ``mysqldump`` CLI (Debian's mariadb-client 10.11, ``mariadb-dump``) run as a pack runs
it, ``--no-defaults`` and the connection on argv, against a real MariaDB 10.11 (Debian's
``mariadb-server``). The failure is the exit status and ``mysqldump: Got error: N: "..." when
...`` / ``mysqldump: Couldn't find table`` on stderr."""

from __future__ import annotations

from typing import Any

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


def _start(stack: Any, work: Any) -> MariaDB:
    require("mysqldump")
    return mariadb(stack, work)


FAM = family(
    "mysqldump",
    "the mysqldump CLI against MariaDB 10.11 (Debian mariadb-server), real",
    served(_start),
    half="heldout5",
)


def _dump(
    *what: str,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Any = None,
    extra: tuple[str, ...] = (),
    timeout: float = 15.0,
) -> Any:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        cli(
            [
                "mysqldump",
                "--no-defaults",
                f"--host={host}",
                f"--port={p}",
                "--protocol=TCP",
                f"--user={user}",
                f"--password={password}",
                *extra,
                *what,
            ],
            timeout=timeout,
        )

    return run


def _lock_wait(c: Ctx) -> None:
    import pymysql

    holder = pymysql.connect(**c.server.kw())
    c.server.root_sql("SET GLOBAL lock_wait_timeout = 1")
    try:
        holder.cursor().execute("LOCK TABLES locked WRITE")
        _dump("app", "locked", extra=("--lock-tables",))(c)
    finally:
        c.server.root_sql("SET GLOBAL lock_wait_timeout = 86400")
        holder.close()


FAM.add(
    "wrong_password",
    AUTH,
    "1045 access denied when trying to connect (bad password)",
    _dump("app", password="nope"),
)
FAM.add(
    "locked_account",
    AUTH,
    "4151 access denied, this account is locked",
    _dump("--all-databases", user="locked", password="locked-pw"),
)
FAM.add(
    "db_denied",
    AUTH,
    "1044 access denied for user to database 'other' when selecting the database",
    _dump("other", user="limited", password="limited-pw"),
)


def _table_denied(c: Ctx) -> None:
    # limited may INSERT into app.secret (so it sees the table) but not SELECT from it
    c.server.root_sql("GRANT INSERT ON app.secret TO 'limited'@'%'")
    _dump("app", "secret", user="limited", password="limited-pw", extra=("--skip-lock-tables",))(c)


FAM.add(
    "table_denied",
    AUTH,
    "1142 SELECT command denied for table secret (the user may only INSERT there)",
    _table_denied,
)
FAM.add(
    "unknown_database",
    NF,
    "1049 unknown database when selecting the database",
    _dump("nosuchdb", user="wide", password="wide-pw"),
)
FAM.add("no_table", NF, 'Couldn\'t find table: "ghost"', _dump("app", "ghost"))
FAM.add("lock_wait", TO, "1205 lock wait timeout exceeded when using LOCK TABLES", _lock_wait)
FAM.add(
    "queries_per_hour",
    RL | QUOTA,
    "1226 user 'hourly' has exceeded the max_queries_per_hour resource",
    _dump("app", "t", user="hourly", password="hourly-pw"),
)
FAM.add(
    "bad_option",
    INT,
    "unknown option --no-such-flag (exit 2): the pack's own argv",
    _dump("app", extra=("--no-such-flag",)),
)
FAM.add(
    "bad_where",
    INT,
    "1064 SQL syntax error in the caller's --where condition",
    _dump("app", "t", extra=("--where=id ==== 1",)),
)
FAM.add(
    "refused", NET, "2002 can't connect: nothing listens", _dump("app", port=lambda c: c.net.closed)
)
FAM.add("dns", NET, "2005 unknown server host (.invalid)", _dump("app", host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never greets: the pack's 1.5 s deadline on the subprocess expires",
    _dump("app", port=lambda c: c.net.silent, timeout=1.5),
)
FAM.add(
    "dropped",
    NET,
    "2013 lost connection at handshake: closed at once",
    _dump("app", port=lambda c: c.net.close_now),
)
