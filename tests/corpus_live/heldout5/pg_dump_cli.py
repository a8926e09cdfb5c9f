"""PostgreSQL's ``pg_dump`` CLI (Debian's postgresql-client 15) run as a pack runs it, a
connection URI on argv, against a real PostgreSQL 15 (Debian's ``postgresql``). The failure is
the exit status and ``pg_dump: error: ...`` on stderr (the server's ``FATAL:``/``ERROR:`` text
quoted in it)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from corpus_live.core import (
    AUTH,
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
    require,
    served,
)
from corpus_live.heldout2._daemons import Postgres, postgres

Ctx = Served[Postgres]


def _start(stack: Any, work: Any) -> Postgres:
    require("pg_dump")
    return postgres(stack, work)


FAM = family(
    "pg_dump",
    "the pg_dump CLI against PostgreSQL 15 (Debian), real",
    served(_start),
    half="heldout5",
)


def _uri(
    c: Ctx,
    *,
    user: str = "app",
    password: str = "app-pw",
    database: str = "app",
    host: str = LOOPBACK,
    port: int | None = None,
    query: str = "connect_timeout=1&sslmode=disable",
) -> str:
    p = c.server.port if port is None else port
    return f"postgresql://{user}:{password}@{host}:{p}/{database}?{query}"


def _dump(*args: str, port: Any = None, **kw: Any) -> Any:
    def run(c: Ctx) -> None:
        uri = _uri(c, port=None if port is None else port(c), **kw)
        with tempfile.TemporaryDirectory(prefix="corpus44-pgdump-") as tmp:
            out = Path(tmp) / "out.sql"
            cli(["pg_dump", "--no-password", "-d", uri, "-f", str(out), *args], timeout=15)

    return run


def _lock_timeout(c: Ctx) -> None:
    import psycopg

    with psycopg.connect(_uri(c)) as holder:
        holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        _dump("--lock-wait-timeout=300ms", "-t", "t")(c)


def _dir_exists(c: Ctx) -> None:
    with tempfile.TemporaryDirectory(prefix="corpus44-pgdump-") as tmp:
        target = Path(tmp) / "dump"
        target.mkdir()
        (target / "toc.dat").write_bytes(b"an earlier dump")
        cli(["pg_dump", "--no-password", "-d", _uri(c), "-Fd", "-f", str(target)], timeout=15)


def _missing_dir(c: Ctx) -> None:
    with tempfile.TemporaryDirectory(prefix="corpus44-pgdump-") as tmp:
        out = Path(tmp) / "no" / "such" / "dir" / "out.sql"
        cli(["pg_dump", "--no-password", "-d", _uri(c), "-t", "t", "-f", str(out)], timeout=15)


FAM.add(
    "wrong_password",
    AUTH,
    'FATAL: password authentication failed for user "app"',
    _dump(password="nope"),
)
FAM.add(
    "cannot_login",
    AUTH,
    'FATAL: role "sleeper" is not permitted to log in',
    _dump(user="sleeper", password="sleeper-pw"),
)
FAM.add("no_database", NF, 'FATAL: database "gone" does not exist', _dump(database="gone"))
FAM.add(
    "table_denied",
    AUTH,
    "query failed: ERROR: permission denied for table secret",
    _dump("-t", "secret"),
)
FAM.add(
    "no_matching_table",
    NF,
    "no matching tables were found for pattern ghost (--strict-names)",
    _dump("--strict-names", "-t", "ghost"),
)
FAM.add(
    "lock_timeout",
    TO,
    "ERROR: canceling statement due to statement timeout (pg_dump's --lock-wait-timeout 300 ms: another session holds the table)",
    _lock_timeout,
)
FAM.add(
    "dir_exists",
    EXISTS | INT,
    "could not create directory: File exists (-Fd onto an earlier dump: the caller's path)",
    _dir_exists,
)
FAM.add(
    "missing_out_dir",
    INT | NF,
    "could not open output file: No such file or directory (the caller's output path)",
    _missing_dir,
)
FAM.add(
    "bad_option",
    INT,
    "unrecognized option --no-such-flag: the pack's own argv",
    _dump("--no-such-flag"),
)
FAM.add(
    "bad_sslmode",
    INT,
    'invalid sslmode value: "sometimes" (the pack built a bad connection string)',
    _dump(query="sslmode=sometimes"),
)
FAM.add("refused", NET, "connection refused: nothing listens", _dump(port=lambda c: c.net.closed))
FAM.add("dns", NET, "could not translate host name (.invalid)", _dump(host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never answers the startup packet (connect_timeout 1: libpq waits 2 s at least)",
    _dump(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "server closed the connection unexpectedly",
    _dump(port=lambda c: c.net.close_now),
)
