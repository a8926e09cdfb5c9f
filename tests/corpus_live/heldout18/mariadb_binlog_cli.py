"""MariaDB's ``mariadb-binlog`` CLI (Debian's ``mariadb-client``: decode binary logs, local
files or read from a server with ``--read-from-remote-server``) run as a pack runs it, options
on argv, against a real MariaDB (Debian's ``mariadb-server``, started without a binary log:
per-user grants, a locked account) and on local files in the case's own directory. Nothing is
faked but the transport failures. The failure is the exit status and ``ERROR: ...`` with the
server's or the tool's error text on stderr."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import (
    AUTH,
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
from corpus_live.servers import MariaDB, mariadb


@dataclass
class Binlog:
    db: MariaDB
    work: Path  # local files of the case


Ctx = Served[Binlog]


def _start(stack: contextlib.ExitStack, work: Path) -> Binlog:
    require("mariadb-binlog")
    db = mariadb(stack, work)
    db.root_sql(
        "CREATE USER 'replicator'@'%' IDENTIFIED BY 'replicator-pw';\n"
        "GRANT REPLICATION SLAVE ON *.* TO 'replicator'@'%';\n"
        "FLUSH PRIVILEGES;\n"
    )
    (work / "notes.txt").write_text("not a binary log, a text file\n" * 20)
    return Binlog(db, work)


FAM = family(
    "mariadb-binlog",
    "the mariadb-binlog CLI against MariaDB (Debian), real; local files",
    served(_start),
    half="heldout18",
)


def _remote(
    *args: str,
    user: str = "replicator",
    password: str = "replicator-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    timeout: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.db.port if port is None else port(c)
        cli(
            [
                "mariadb-binlog",
                "--no-defaults",
                "--read-from-remote-server",
                f"--host={host}",
                f"--port={p}",
                "--protocol=TCP",
                f"--user={user}",
                f"--password={password}",
                *args,
            ],
            timeout=timeout,
        )

    return run


def _local(*args: str | Callable[[Ctx], str]) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        argv = [a(c) if callable(a) else a for a in args]
        cli(["mariadb-binlog", "--no-defaults", *argv])

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "Access denied for user 'replicator' (using password: YES)",
    _remote("mysql-bin.000001", password="not-it"),
)
FAM.add(
    "unknown_user",
    AUTH,
    "Access denied: no such account",
    _remote("mysql-bin.000001", user="ghost", password="ghost-pw"),
)
FAM.add(
    "locked_account",
    AUTH,
    "the account is locked (ACCOUNT LOCK): access denied",
    _remote("mysql-bin.000001", user="locked", password="locked-pw"),
)
FAM.add(
    "no_replication_privilege",
    AUTH,
    "app has ALL on app.* but no REPLICATION SLAVE: the binlog dump is refused",
    _remote("mysql-bin.000001", user="app", password="app-pw"),
)
FAM.add(
    "binary_log_off",
    INT,
    "the server runs without a binary log: the dump request fails (binlog not open)",
    _remote("mysql-bin.000001"),
)
FAM.add(
    "local_file_missing",
    NF,
    "the local binlog file named on argv does not exist",
    _local(lambda c: str(c.server.work / "mysql-bin.000042")),
)
FAM.add(
    "local_not_a_binlog",
    INT,
    "the local file is text, not a binary log: bad magic number",
    _local(lambda c: str(c.server.work / "notes.txt")),
)
FAM.add(
    "bad_start_datetime",
    INT,
    "the pack passes a --start-datetime the tool cannot parse",
    _local("--start-datetime=yesterday-ish", lambda c: str(c.server.work / "notes.txt")),
)
FAM.add(
    "unknown_option",
    INT,
    "the pack passes an option this mariadb-binlog does not know",
    _local("--start-gtid-from-tomorrow", lambda c: str(c.server.work / "notes.txt")),
)
FAM.add("refused", NET, "nothing listens", _remote("mysql-bin.000001", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve (.invalid)",
    _remote("mysql-bin.000001", host=UNRESOLVABLE, port=lambda c: 3306),
)
FAM.add(
    "silent",
    TO,
    "the server never sends its greeting: the pack's 2 s deadline (subprocess timeout)",
    _remote("mysql-bin.000001", port=lambda c: c.net.silent, timeout=2.0),
)
FAM.add(
    "dropped",
    NET,
    "the peer closes the connection at once (lost connection during handshake)",
    _remote("mysql-bin.000001", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer answers bytes that are not the MySQL protocol",
    _remote("mysql-bin.000001", port=lambda c: c.net.garbage),
)
