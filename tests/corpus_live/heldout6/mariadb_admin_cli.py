"""MariaDB's ``mariadb-admin`` CLI (Debian's mariadb-client, the tool once called
``mysqladmin``) run as a pack runs it, credentials on argv, against a real MariaDB 10.11
(Debian's ``mariadb-server``). The failure is the exit status and ``mariadb-admin: ...`` on
stderr (the server's error text quoted in it, libmariadb's client errors for the
transport)."""

from __future__ import annotations

from typing import Any

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
    cli,
    family,
    require,
    served,
)
from corpus_live.servers import MariaDB, mariadb

Ctx = Served[MariaDB]


def _start(stack: Any, work: Any) -> MariaDB:
    require("mariadb-admin")
    return mariadb(stack, work)


FAM = family(
    "mariadb-admin",
    "the mariadb-admin CLI against MariaDB 10.11 (Debian), real",
    served(_start),
    half="heldout6",
)


def _admin(
    *command: str,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Any = None,
    socket: bool = False,
    timeout: int = 2,
) -> Any:
    def run(c: Ctx) -> None:
        if socket:
            where = [f"--socket={c.server.socket}", "-uroot"]
        else:
            p = c.server.port if port is None else port(c)
            where = ["-h", host, "-P", str(p), f"-u{user}", f"-p{password}", "--protocol=TCP"]
        cli(
            ["mariadb-admin", "--no-defaults", f"--connect-timeout={timeout}", *where, *command],
            timeout=15,
        )

    return run


def _second_connection(c: Ctx) -> None:
    import pymysql

    first = pymysql.connect(**c.server.kw(user="single", password="single-pw", database=None))
    try:
        _admin("status", user="single", password="single-pw")(c)
    finally:
        first.close()


FAM.add(
    "wrong_password",
    AUTH,
    "Access denied for user 'app'@'127.0.0.1' (using password: YES)",
    _admin("status", password="bad"),
)
FAM.add(
    "locked_account",
    AUTH,
    "Access denied, this account is locked",
    _admin("status", user="locked", password="locked-pw"),
)
FAM.add(
    "create_denied",
    AUTH,
    "CREATE DATABASE failed: Access denied for user 'app' to database 'newdb'",
    _admin("create", "newdb"),
)
FAM.add(
    "shutdown_denied",
    AUTH,
    "shutdown failed: Access denied; you need the SHUTDOWN privilege",
    _admin("shutdown"),
)
FAM.add(
    "db_exists",
    EXISTS,
    "CREATE DATABASE failed: Can't create database 'app'; database exists",
    _admin("create", "app", socket=True),
)
FAM.add(
    "drop_missing",
    NF,
    "DROP DATABASE gone failed: Can't drop database 'gone'; database doesn't exist",
    _admin("--force", "drop", "gone", socket=True),
)
FAM.add(
    "kill_unknown",
    NF,
    "kill on thread 987654 failed: Unknown thread id: 987654",
    _admin("kill", "987654", socket=True),
)
FAM.add(
    "user_connections",
    RL | QUOTA,
    "User 'single' has exceeded the 'max_user_connections' resource (1, another session holds it)",
    _second_connection,
)
FAM.add(
    "unknown_command",
    INT,
    "Unknown command: 'frobnicate' (the pack's own argv)",
    _admin("frobnicate"),
)
FAM.add(
    "bad_option",
    INT,
    "unknown option '--no-such-flag' (the pack's own argv)",
    _admin("--no-such-flag", "ping"),
)
FAM.add(
    "refused",
    NET,
    "Can't connect to server on '127.0.0.1' (115): nothing listens",
    _admin("ping", port=lambda c: c.net.closed),
)
FAM.add("dns", NET, "Unknown server host (.invalid)", _admin("ping", host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never sends its greeting (--connect-timeout 1)",
    _admin("ping", port=lambda c: c.net.silent, timeout=1),
)
FAM.add(
    "dropped",
    NET,
    "Lost connection to server at 'handshake': closed at once",
    _admin("ping", port=lambda c: c.net.close_now),
)
