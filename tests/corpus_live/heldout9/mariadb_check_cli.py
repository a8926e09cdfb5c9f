"""MariaDB's ``mariadb-check`` CLI (``mysqlcheck``; Debian's ``mariadb-client``) run as a pack
runs it (``--no-defaults``, TCP to 127.0.0.1, a subprocess deadline: the tool has no
connect timeout of its own), checking, analyzing
and repairing tables of a real MariaDB (Debian's ``mariadb-server``): users with a wrong
password, a locked account, a per-user connection cap, a per-hour query cap. The failure is
the exit status and the tool's ``Got error: NNNN: ...`` on stderr, or the per-table
``Error`` lines it prints when the server answers a table's check with an error. Nothing is
faked."""

from __future__ import annotations

import contextlib
import subprocess
import time
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
    family,
    require,
    served,
)
from corpus_live.servers import MariaDB, mariadb

Ctx = Served[MariaDB]


def _start(stack: contextlib.ExitStack, work: Path) -> MariaDB:
    require("mariadb-check")
    return mariadb(stack, work)


FAM = family(
    "mariadb-check",
    "the mariadb-check CLI against MariaDB (Debian), real",
    served(_start),
    half="heldout9",
)


def _check(
    *args: str,
    user: str = "app",
    password: str = "app-pw",
    host: str = LOOPBACK,
    port: Callable[[Ctx], int] | None = None,
    deadline: float = 20.0,
) -> Callable[[Ctx], None]:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        subprocess.run(
            [
                "mariadb-check",
                "--no-defaults",
                "--protocol=TCP",
                f"--host={host}",
                f"--port={p}",
                f"--user={user}",
                f"--password={password}",
                *args,
            ],
            capture_output=True,
            check=True,
            timeout=deadline,
        )

    return run


FAM.add(
    "wrong_password",
    AUTH,
    "access denied for app with a wrong password",
    _check("app", password="nope"),
)
FAM.add(
    "account_locked",
    AUTH,
    "the account is locked",
    _check("app", user="locked", password="locked-pw"),
)
FAM.add(
    "unknown_database",
    NF,
    "no database ledger (wide may read every database)",
    _check("ledger", user="wide", password="wide-pw"),
)
FAM.add(
    "no_database_access",
    AUTH,
    "app has no grant on database other",
    _check("other"),
)
FAM.add(
    "query_cap",
    RL | QUOTA,
    "max_queries_per_hour 1 is used up by the tool's own queries",
    _check("app", user="hourly", password="hourly-pw"),
)


def _second_session(c: Ctx) -> None:
    """single may hold one connection (MAX_USER_CONNECTIONS 1): another client holds it."""
    holder = subprocess.Popen(
        [
            "mariadb",
            "--no-defaults",
            "--protocol=TCP",
            f"--host={LOOPBACK}",
            f"--port={c.server.port}",
            "--user=single",
            "--password=single-pw",
            "-e",
            "SELECT SLEEP(3)",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and not _connected(c, "single"):
            time.sleep(0.05)
        _check("app", user="single", password="single-pw")(c)
    finally:
        holder.kill()
        holder.wait()


def _connected(c: Ctx, user: str) -> bool:
    out = subprocess.run(
        [
            "mariadb",
            "--no-defaults",
            "-uroot",
            f"--socket={c.server.socket}",
            "-N",
            "-e",
            f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '{user}'",
        ],
        capture_output=True,
        check=True,
    )
    return out.stdout.strip() not in (b"", b"0")


FAM.add(
    "user_connections",
    RL | QUOTA,
    "MAX_USER_CONNECTIONS 1 and another session of the user is open",
    _second_session,
)
FAM.add("bad_option", INT, "an option the tool does not know", _check("--frobnicate", "app"))
FAM.add("refused", NET, "nothing listens", _check("app", port=lambda c: c.net.closed))
FAM.add(
    "dns",
    NET,
    "host does not resolve",
    _check("app", host=UNRESOLVABLE, port=lambda c: 3306),
)
FAM.add(
    "silent",
    TO,
    "the server never sends its handshake: the pack's 1.5 s subprocess deadline",
    _check("app", port=lambda c: c.net.silent, deadline=1.5),
)
FAM.add(
    "dropped",
    NET,
    "closed at once",
    _check("app", port=lambda c: c.net.close_now),
)
FAM.add(
    "garbage",
    NET | INT,
    "the peer answers bytes of no protocol",
    _check("app", port=lambda c: c.net.garbage),
)
