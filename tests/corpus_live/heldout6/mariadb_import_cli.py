"""MariaDB's ``mariadb-import`` CLI (Debian's mariadb-client, once ``mysqlimport``: ``LOAD
DATA [LOCAL] INFILE`` of a file into the table its name names) run as a pack runs it,
credentials on argv, against a real MariaDB 10.11 (Debian's ``mariadb-server``). The failure
is the exit status and ``mariadb-import: Error: <errno>, <server text>, when using table:
...`` on stderr (libmariadb's client errors for the transport)."""

from __future__ import annotations

import tempfile
from pathlib import Path
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
    require("mariadb-import")
    return mariadb(stack, work)


FAM = family(
    "mariadb-import",
    "the mariadb-import CLI against MariaDB 10.11 (Debian), real",
    served(_start),
    half="heldout6",
)


def _import(
    table: str = "t",
    rows: str | None = "7\tseven\n",
    *args: str,
    user: str = "app",
    password: str = "app-pw",
    database: str = "app",
    host: str = LOOPBACK,
    port: Any = None,
    local: bool = True,
    timeout: float = 15,
) -> Any:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        with tempfile.TemporaryDirectory(prefix="corpus44-mimport-") as tmp:
            data = Path(tmp) / f"{table}.txt"
            if rows is not None:
                data.write_text(rows)
            argv = ["mariadb-import", "--no-defaults", "--protocol=TCP"]
            argv += ["-h", host, "-P", str(p), f"-u{user}", f"-p{password}"]
            argv += ["--local"] if local else []
            cli([*argv, *args, database, str(data)], timeout=timeout)

    return run


def _second_connection(c: Ctx) -> None:
    import pymysql

    first = pymysql.connect(**c.server.kw(user="single", password="single-pw", database=None))
    try:
        _import(user="single", password="single-pw")(c)
    finally:
        first.close()


def _table_locked(c: Ctx) -> None:
    import pymysql

    holder = pymysql.connect(**c.server.kw())
    try:
        with holder.cursor() as cur:
            cur.execute("LOCK TABLES t WRITE")
        _import(timeout=2)(c)
    finally:
        holder.close()


FAM.add(
    "wrong_password",
    AUTH,
    "1045 Access denied for user 'app'@'127.0.0.1' (using password: YES)",
    _import(password="bad"),
)
FAM.add(
    "locked_account",
    AUTH,
    "4151 Access denied, this account is locked",
    _import(user="locked", password="locked-pw"),
)
FAM.add(
    "insert_denied",
    AUTH,
    "1142 INSERT command denied to user 'limited' for table t (SELECT only)",
    _import(user="limited", password="limited-pw"),
)
FAM.add(
    "file_privilege",
    AUTH,
    "1045 Access denied: a server-side LOAD DATA INFILE needs the FILE privilege (no --local)",
    _import(local=False),
)
FAM.add(
    "unknown_database",
    NF,
    "1049 Unknown database 'missing_db' (a user with global grants)",
    _import(user="wide", password="wide-pw", database="missing_db"),
)
FAM.add(
    "no_table",
    NF,
    "1146 Table 'app.ghost' doesn't exist (the file's name names the table)",
    _import("ghost"),
)
FAM.add(
    "no_column",
    INT,
    "1054 Unknown column 'price' (--columns: the caller's mapping)",
    _import("t", "7\t10\n", "--columns=id,price"),
)
FAM.add(
    "local_file_missing",
    INT | NF,
    "the pack's own data file does not exist (LOAD DATA LOCAL cannot read it)",
    _import("t", None),
)
FAM.add(
    "user_connections",
    RL | QUOTA,
    "1226 User 'single' has exceeded the 'max_user_connections' resource (another session holds it)",
    _second_connection,
)
FAM.add(
    "table_locked",
    TO,
    "another session holds LOCK TABLES t WRITE: the load waits, the pack's 2 s limit fires",
    _table_locked,
)
FAM.add(
    "bad_option",
    INT,
    "unknown option '--no-such-flag' (the pack's own argv)",
    _import("t", "7\tseven\n", "--no-such-flag"),
)
FAM.add(
    "refused",
    NET,
    "2002 Can't connect to server on '127.0.0.1': nothing listens",
    _import(port=lambda c: c.net.closed),
)
FAM.add("dns", NET, "2005 Unknown server host (.invalid)", _import(host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never sends its greeting (mariadb-import has no connect timeout): the pack's 2 s limit fires",
    _import(port=lambda c: c.net.silent, timeout=2),
)
FAM.add(
    "dropped",
    NET,
    "2013 Lost connection to server at 'handshake': closed at once",
    _import(port=lambda c: c.net.close_now),
)
