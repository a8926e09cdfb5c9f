"""aiosqlite (asyncio over the standard ``sqlite3`` module, SQLite 3.40 of Debian 12) on real
local files made by the setup: a database another process holds in an exclusive
transaction, a file that is no database, a corrupt one, read-only opens (``mode=ro`` URIs),
constraint and catalog errors, a page limit as the disk quota, an interrupt at the pack's
deadline. The failures are ``sqlite3`` exceptions raised through aiosqlite's worker
thread."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NF, QUOTA, TO, family, run_async


@dataclass
class Files:
    db: Path  # t (id INTEGER PRIMARY KEY, name TEXT NOT NULL), parent/child with a foreign key
    held: Path  # a database another process holds in BEGIN EXCLUSIVE
    not_db: Path  # a file of the right name that is no SQLite database
    corrupt: Path  # a real database whose pages were overwritten
    work: Path


_HOLDER = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("CREATE TABLE IF NOT EXISTS x (i INTEGER)")
con.execute("BEGIN EXCLUSIVE")
con.execute("INSERT INTO x VALUES (1)")
print("ready", flush=True)
sys.stdin.read()
"""


def _files(stack: contextlib.ExitStack, work: Path) -> Files:
    db = work / "app.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.executescript(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            INSERT INTO t VALUES (1, 'one'), (2, 'two');
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (pid INTEGER REFERENCES parent(id));
            """
        )
    held = work / "held.sqlite"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(held)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    def stop() -> None:
        assert holder.stdin is not None
        holder.stdin.close()
        try:
            holder.wait(10)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()

    stack.callback(stop)
    assert holder.stdout is not None
    if holder.stdout.readline().strip() != b"ready":
        raise RuntimeError("the SQLite holder process did not start")
    not_db = work / "report.sqlite"
    not_db.write_bytes(b"%PDF-1.7 this is a report, not a database\n" + b"\x00" * 8192)
    corrupt = work / "corrupt.sqlite"
    with contextlib.closing(sqlite3.connect(corrupt)) as con:
        con.execute("CREATE TABLE big (i INTEGER, s TEXT)")
        con.executemany("INSERT INTO big VALUES (?, ?)", [(i, "x" * 200) for i in range(200)])
        con.commit()
    raw = bytearray(corrupt.read_bytes())
    raw[4096 + 8 : 4096 * 4] = b"\xa5" * (4096 * 4 - 4096 - 8)  # the table's b-tree pages
    corrupt.write_bytes(bytes(raw))
    return Files(db, held, not_db, corrupt, work)


FAM = family(
    "aiosqlite",
    "aiosqlite (sqlite3) on local files made by the setup, real",
    _files,
    half="heldout6",
)


def _sql(*statements: str, db: Any = None, uri: str = "", timeout: float = 0.3) -> Any:
    async def go(c: Files) -> None:
        import aiosqlite

        path = c.db if db is None else db(c)
        target = f"file:{path}?{uri}" if uri else str(path)
        async with aiosqlite.connect(target, uri=bool(uri), timeout=timeout) as con:
            for s in statements:
                cur = await con.execute(s)
                await cur.fetchall()
            await con.commit()

    return lambda c: run_async(go(c))


async def _interrupted(c: Files) -> None:
    import aiosqlite

    async with aiosqlite.connect(c.db) as con:
        loop = asyncio.get_running_loop()
        loop.call_later(0.3, con._conn.interrupt)  # the pack's deadline (sqlite3_interrupt)
        cur = await con.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
            "SELECT count(*) FROM n WHERE i < 0"
        )
        await cur.fetchall()


async def _closed(c: Files) -> None:
    import aiosqlite

    con = await aiosqlite.connect(c.db)
    await con.close()
    await con.execute("SELECT 1")


FAM.add(
    "locked_by_other",
    TO,
    "database is locked: another process holds an exclusive transaction (busy timeout 0.3 s)",
    _sql("INSERT INTO x VALUES (2)", db=lambda c: c.held),
)
FAM.add(
    "not_a_database",
    INT,
    "file is not a database (a PDF under the database's name)",
    _sql("SELECT * FROM t", db=lambda c: c.not_db),
)
FAM.add(
    "malformed",
    INT,
    "database disk image is malformed (its pages were overwritten)",
    _sql("SELECT count(*), sum(length(s)) FROM big", db=lambda c: c.corrupt),
)
FAM.add(
    "missing_dir",
    NF | INT,
    "unable to open database file: its directory does not exist",
    _sql("SELECT 1", db=lambda c: c.work / "no" / "such" / "dir" / "app.sqlite"),
)
FAM.add(
    "missing_read_only",
    NF,
    "unable to open database file: mode=ro on a database that does not exist",
    _sql("SELECT 1", db=lambda c: c.work / "never-made.sqlite", uri="mode=ro"),
)
FAM.add(
    "read_only_write",
    INT | AUTH,
    "attempt to write a readonly database (opened with mode=ro)",
    _sql("INSERT INTO t VALUES (9, 'nine')", uri="mode=ro"),
)
FAM.add("no_table", NF, "no such table: gone", _sql("SELECT * FROM gone"))
FAM.add("no_column", INT, "no such column: price (the caller's query)", _sql("SELECT price FROM t"))
FAM.add("table_exists", EXISTS, "table t already exists", _sql("CREATE TABLE t (id INTEGER)"))
FAM.add(
    "unique",
    EXISTS,
    "UNIQUE constraint failed: t.id",
    _sql("INSERT INTO t VALUES (1, 'uno')"),
)
FAM.add(
    "not_null",
    INT,
    "NOT NULL constraint failed: t.name (the caller's row)",
    _sql("INSERT INTO t (id) VALUES (7)"),
)
FAM.add(
    "foreign_key",
    INT,
    "FOREIGN KEY constraint failed (a child row whose parent does not exist)",
    _sql("PRAGMA foreign_keys = ON", "INSERT INTO child VALUES (404)"),
)
FAM.add("syntax", INT, 'near "SELEC": syntax error', _sql("SELEC * FROM t"))
FAM.add(
    "disk_full",
    QUOTA,
    "database or disk is full (PRAGMA max_page_count caps the file)",
    _sql(
        "PRAGMA max_page_count = 8",
        "CREATE TABLE IF NOT EXISTS blob_store (b BLOB)",
        "INSERT INTO blob_store VALUES (zeroblob(200000))",
        db=lambda c: c.work / "capped.sqlite",
    ),
)
FAM.add(
    "interrupted",
    TO,
    "interrupted: sqlite3_interrupt at the pack's 0.3 s deadline (an endless recursive query)",
    lambda c: run_async(_interrupted(c)),
)
FAM.add(
    "closed_connection",
    INT,
    "the pack's own bug: a query on a connection it already closed",
    lambda c: run_async(_closed(c)),
)
