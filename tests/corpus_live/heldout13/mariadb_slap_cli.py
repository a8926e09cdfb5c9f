"""MariaDB's ``mariadb-slap`` CLI (Debian's ``mariadb-client``: a load-emulation client running
a query over concurrent connections) run as a pack runs it, options on argv, against a real
MariaDB (Debian's ``mariadb-server``: per-user connection and query limits, a locked account,
table-level grants). Nothing is faked but the transport failures. The failure is the exit
status and ``mariadb-slap: ...`` with the server's error text on stderr. A query that fails
in mariadb-slap's client threads is only reported on stderr (``Cannot run query ... ERROR :
...``) while the exit status stays 0, so the pack, like any careful wrapper of it, treats
any stderr as a failure and raises ``CalledProcessError`` with it."""

from __future__ import annotations

import contextlib
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
from corpus_live.servers import MariaDB, mariadb

Ctx = Served[MariaDB]


def _start(stack: contextlib.ExitStack, work: Path) -> MariaDB:
    require("mariadb-slap")
    return mariadb(stack, work)


FAM = family(
    "mariadb-slap",
    "the mariadb-slap CLI against MariaDB (Debian), real",
    served(_start),
    half="heldout13",
)


def _run(argv: list[str], timeout: float) -> None:
    done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
    if done.returncode != 0 or done.stderr.strip():
        raise subprocess.CalledProcessError(done.returncode, argv, done.stdout, done.stderr)


def _slap(
    query: str = "SELECT * FROM t",
    *extra: str,
    user: str = "app",
    password: str = "app-pw",
    schema: str = "app",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    timeout: float = 10.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        _run(
            [
                "mariadb-slap",
                "--no-defaults",
                f"--host={host}",
                f"--port={p}",
                "--protocol=TCP",
                f"--user={user}",
                f"--password={password}",
                f"--create-schema={schema}",
                "--no-drop",
                f"--query={query}",
                "--concurrency=1",
                "--iterations=1",
                *extra,
            ],
            timeout=timeout,
        )

    return run


FAM.add("wrong_password", AUTH, "1045 Access denied for user 'app'", _slap(password="not-it"))
FAM.add(
    "locked_account",
    AUTH,
    "4151 Access denied, this account is locked",
    _slap(user="locked", password="locked-pw"),
)
FAM.add(
    "table_grant_missing",
    AUTH,
    "1142 SELECT command denied to user 'limited' for table 'secret'",
    _slap("SELECT * FROM secret", user="limited", password="limited-pw"),
)
FAM.add(
    "connection_limit",
    RL | NET,
    "1226 'single' has exceeded max_user_connections (1) with --concurrency=3",
    _slap("SELECT SLEEP(0.3)", "--concurrency=3", user="single", password="single-pw"),
)
FAM.add(
    "queries_per_hour",
    RL | QUOTA,
    "1226 'hourly' has exceeded max_queries_per_hour (1)",
    _slap("SELECT 1", "--iterations=3", user="hourly", password="hourly-pw"),
)
FAM.add(
    "no_table", NF, "1146 Table 'app.missing_t' doesn't exist", _slap("SELECT * FROM missing_t")
)
FAM.add(
    "duplicate_key",
    EXISTS,
    "1062 Duplicate entry '1' for key 'PRIMARY'",
    _slap("INSERT INTO t VALUES (1, 'dup')"),
)
FAM.add("syntax", INT, "1064 SQL syntax error in the pack's query", _slap("SELEC * FROM t"))
FAM.add(
    "data_too_long",
    INT,
    "1406 Data too long for column 'name' (strict mode, the pack's input)",
    _slap("INSERT INTO t VALUES (9, 'much too long')"),
)
FAM.add(
    "unknown_database",
    NF,
    "1049 Unknown database 'nodb' (a user allowed to read every schema)",
    _slap("SELECT 1", user="wide", password="wide-pw", schema="nodb"),
)
FAM.add(
    "bad_option",
    INT,
    "mariadb-slap's own check: an option it does not know (the pack's argv)",
    _slap("SELECT 1", "--max-rows=10"),
)
FAM.add("refused", NET, "2002 Can't connect: nothing listens", _slap(port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "2005 Unknown server host",
    _slap(host=UNRESOLVABLE, port=lambda c: 3306),
)
FAM.add(
    "silent",
    TO,
    "the server never sends its handshake: the pack's 2 s deadline",
    _slap(port=lambda c: c.net.silent, timeout=2),
)
FAM.add(
    "dropped",
    NET,
    "2013 Lost connection to server at 'handshake'",
    _slap(port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET,
    "the peer's handshake is no MySQL protocol",
    _slap(port=lambda c: c.net.garbage),
)
