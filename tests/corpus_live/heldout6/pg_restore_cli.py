"""PostgreSQL's ``pg_restore`` CLI (Debian's postgresql-client 15) run as a pack runs it, a
connection URI on argv and ``--exit-on-error``, restoring a custom-format archive that
``pg_dump -Fc`` made in the setup, against a real PostgreSQL 15 (Debian's ``postgresql``).
The failure is the exit status and ``pg_restore: error: ...`` on stderr (the server's
``FATAL:``/``ERROR:`` text quoted in it)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
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
from corpus_live.heldout2._daemons import postgres


@dataclass
class Restore:
    port: int
    archive: Path  # pg_dump -Fc of table t (schema and its two rows)
    plain: Path  # the same as a plain SQL script


Ctx = Served[Restore]


def _uri(
    port: int,
    *,
    user: str = "app",
    password: str = "app-pw",
    database: str = "app",
    host: str = LOOPBACK,
) -> str:
    return (
        f"postgresql://{user}:{password}@{host}:{port}/{database}?connect_timeout=1&sslmode=disable"
    )


def _start(stack: Any, work: Path) -> Restore:
    require("pg_restore", "pg_dump")
    pg = postgres(stack, work)
    archive, plain = work / "t.dump", work / "t.sql"
    for fmt, out in (("-Fc", archive), ("-Fp", plain)):
        subprocess.run(
            ["pg_dump", "--no-password", "-d", _uri(pg.port), "-t", "t", fmt, "-f", str(out)],
            check=True,
            capture_output=True,
            timeout=30,
        )
    return Restore(pg.port, archive, plain)


FAM = family(
    "pg_restore",
    "the pg_restore CLI against PostgreSQL 15 (Debian), real",
    served(_start),
    half="heldout6",
)


def _restore(
    *args: str,
    port: Any = None,
    archive: Any = None,
    timeout: float = 15,
    **kw: Any,
) -> Any:
    def run(c: Ctx) -> None:
        p = c.server.port if port is None else port(c)
        src = str(c.server.archive if archive is None else archive(c))
        argv = ["pg_restore", "--no-password", "--exit-on-error", "--no-owner"]
        argv += ["-d", _uri(p, **kw), *args, src]
        cli(argv, timeout=timeout)

    return run


def _lock_timeout(c: Ctx) -> None:
    import psycopg

    with psycopg.connect(_uri(c.server.port)) as holder:
        holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        _restore("--data-only", timeout=2)(c)


def _scratch_file(data: bytes) -> Any:
    def make(c: Ctx) -> Path:
        path = c.server.archive.with_name("garbage.dump")
        path.write_bytes(data)
        return path

    return make


FAM.add(
    "wrong_password",
    AUTH,
    'FATAL: password authentication failed for user "app"',
    _restore(password="nope"),
)
FAM.add(
    "cannot_login",
    AUTH,
    'FATAL: role "sleeper" is not permitted to log in',
    _restore(user="sleeper", password="sleeper-pw"),
)
FAM.add("no_database", NF, 'FATAL: database "gone" does not exist', _restore(database="gone"))
FAM.add(
    "schema_denied",
    AUTH,
    "ERROR: permission denied for schema public (app restores into the database postgres)",
    _restore(database="postgres"),
)
FAM.add(
    "table_exists",
    EXISTS,
    'ERROR: relation "t" already exists (restoring the schema over the live table)',
    _restore("--schema-only"),
)
FAM.add(
    "duplicate_rows",
    EXISTS,
    'COPY failed: ERROR: duplicate key value violates unique constraint "t_pkey"',
    _restore("--data-only"),
)
FAM.add(
    "lock_timeout",
    TO,
    "the pack's 2 s limit on pg_restore fires: COPY waits on a table another session holds locked (the archive sets lock_timeout 0)",
    _lock_timeout,
)
FAM.add(
    "connection_limit",
    RL | QUOTA,
    'FATAL: too many connections for role "single" (CONNECTION LIMIT 0)',
    _restore(user="single", password="single-pw"),
)
FAM.add(
    "missing_archive",
    INT | NF,
    "could not open input file: No such file or directory (the pack's own path)",
    _restore(archive=lambda c: c.server.archive.with_name("never-dumped.dump")),
)
FAM.add(
    "not_an_archive",
    INT,
    "input file does not appear to be a valid archive (garbage bytes)",
    _restore(archive=_scratch_file(b"\x00\x01 this is no archive at all\n" * 4)),
)
FAM.add(
    "plain_sql",
    INT,
    "input file appears to be a text format dump. Please use psql.",
    _restore(archive=lambda c: c.server.plain),
)
FAM.add(
    "bad_option",
    INT,
    "unrecognized option --no-such-flag: the pack's own argv",
    _restore("--no-such-flag"),
)
FAM.add(
    "refused", NET, "connection refused: nothing listens", _restore(port=lambda c: c.net.closed)
)
FAM.add("dns", NET, "could not translate host name (.invalid)", _restore(host=UNRESOLVABLE))
FAM.add(
    "silent",
    TO,
    "the server never answers the startup packet (connect_timeout 1: libpq waits 2 s at least)",
    _restore(port=lambda c: c.net.silent),
)
FAM.add(
    "dropped",
    NET,
    "server closed the connection unexpectedly",
    _restore(port=lambda c: c.net.close_now),
)
