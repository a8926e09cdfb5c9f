"""APSW (Another Python SQLite Wrapper, with its own bundled SQLite 3.54) on real local files
made by the setup: a database another process holds in an exclusive transaction, a file that
is no database, a corrupt one, read-only opens, an authorizer that denies a table, constraint
and catalog errors, a page cap as the disk quota, a length limit, an interrupt at the pack's
deadline. The failures are APSW's own exception classes (``apsw.BusyError``,
``apsw.ConstraintError``...) carrying SQLite's messages. Nothing is faked."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import AUTH, EXISTS, INT, NF, QUOTA, TO, family


@dataclass
class Files:
    db: Path  # items (id PRIMARY KEY, sku UNIQUE, qty NOT NULL), orders -> items foreign key
    held: Path  # a database another process holds in BEGIN EXCLUSIVE
    not_db: Path  # a file of the right name that is no SQLite database
    corrupt: Path  # a real database whose b-tree pages were overwritten
    work: Path


_HOLDER = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("CREATE TABLE IF NOT EXISTS jobs (i INTEGER)")
con.execute("BEGIN EXCLUSIVE")
con.execute("INSERT INTO jobs VALUES (1)")
print("ready", flush=True)
sys.stdin.read()
"""


def _files(stack: contextlib.ExitStack, work: Path) -> Files:
    import apsw

    db = work / "shop.db"
    con = apsw.Connection(str(db))
    con.execute(
        """
        CREATE TABLE items (id INTEGER PRIMARY KEY, sku TEXT UNIQUE, qty INTEGER NOT NULL);
        INSERT INTO items VALUES (1, 'A-1', 3), (2, 'B-2', 5);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, item INTEGER REFERENCES items(id));
        CREATE TABLE payroll (who TEXT, amount INTEGER);
        """
    )
    con.close()
    held = work / "queue.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(held)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    def stop() -> None:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        try:
            holder.wait(10)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
        holder.stdout.close()

    stack.callback(stop)
    assert holder.stdout is not None
    if holder.stdout.readline().strip() != b"ready":
        raise RuntimeError("the SQLite holder process did not start")
    not_db = work / "export.db"
    not_db.write_bytes(b"PK\x03\x04 a zip archive, not a database\n" + b"\x00" * 8192)
    corrupt = work / "corrupt.db"
    con = apsw.Connection(str(corrupt))
    con.execute("CREATE TABLE log (i INTEGER, s TEXT)")
    with con:
        for i in range(200):
            con.execute("INSERT INTO log VALUES (?, ?)", (i, "y" * 200))
    con.close()
    raw = bytearray(corrupt.read_bytes())
    raw[4096 + 8 : 4096 * 4] = b"\x5a" * (4096 * 4 - 4096 - 8)
    corrupt.write_bytes(bytes(raw))
    return Files(db, held, not_db, corrupt, work)


FAM = family(
    "apsw",
    "APSW (bundled SQLite) on local files made by the setup, real",
    _files,
    half="heldout10",
)


def _sql(
    *statements: str,
    db: Callable[[Files], Path] | None = None,
    flags: str = "rw",
    busy_ms: int = 300,
    prepare: Callable[[Any], None] | None = None,
) -> Callable[[Files], None]:
    def run(c: Files) -> None:
        import apsw

        path = c.db if db is None else db(c)
        mode = {
            "rw": apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE,
            "ro": apsw.SQLITE_OPEN_READONLY,
            "existing": apsw.SQLITE_OPEN_READWRITE,
        }[flags]
        con = apsw.Connection(str(path), flags=mode)
        try:
            con.set_busy_timeout(busy_ms)
            if prepare is not None:
                prepare(con)
            for s in statements:
                list(con.execute(s))
        finally:
            con.close()

    return run


def _deny_payroll(con: Any) -> None:
    import apsw

    def authorizer(op: int, a: str | None, b: str | None, dbname: str | None, t: Any) -> int:
        if op == apsw.SQLITE_READ and a == "payroll":
            return int(apsw.SQLITE_DENY)
        return int(apsw.SQLITE_OK)

    con.authorizer = authorizer


def _short_limit(con: Any) -> None:
    import apsw

    con.limit(apsw.SQLITE_LIMIT_LENGTH, 1000)


def _interrupted(c: Files) -> None:
    import apsw

    con = apsw.Connection(str(c.db))
    timer = threading.Timer(0.3, con.interrupt)  # the pack's deadline
    timer.start()
    try:
        list(
            con.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                "SELECT count(*) FROM n WHERE i < 0"
            )
        )
    finally:
        timer.cancel()
        con.close()


def _bindings(c: Files) -> None:
    import apsw

    con = apsw.Connection(str(c.db))
    try:
        con.execute("INSERT INTO items (sku, qty) VALUES (?, ?)", ("Z-9",))
    finally:
        con.close()


def _closed(c: Files) -> None:
    import apsw

    con = apsw.Connection(str(c.db))
    con.close()
    con.execute("SELECT 1")


FAM.add(
    "locked_by_other",
    TO,
    "database is locked: another process holds an exclusive transaction (busy timeout 0.3 s)",
    _sql("INSERT INTO jobs VALUES (2)", db=lambda c: c.held),
)
FAM.add(
    "not_a_database",
    INT,
    "file is not a database (a zip archive under the database's name)",
    _sql("SELECT * FROM items", db=lambda c: c.not_db),
)
FAM.add(
    "corrupt",
    INT,
    "database disk image is malformed (its pages were overwritten)",
    _sql("SELECT count(*), sum(length(s)) FROM log", db=lambda c: c.corrupt),
)
FAM.add(
    "missing_existing",
    NF,
    "unable to open database file: opened without CREATE and the file does not exist",
    _sql("SELECT 1", db=lambda c: c.work / "never-made.db", flags="existing"),
)
FAM.add(
    "read_only_write",
    INT | AUTH,
    "attempt to write a readonly database (opened SQLITE_OPEN_READONLY)",
    _sql("UPDATE items SET qty = 0", flags="ro"),
)
FAM.add(
    "authorizer_denied",
    AUTH,
    "access to payroll.who is prohibited: the connection's authorizer denies the read",
    _sql("SELECT * FROM payroll", prepare=_deny_payroll),
)
FAM.add("no_table", NF, "no such table: invoices", _sql("SELECT * FROM invoices"))
FAM.add(
    "index_exists",
    EXISTS,
    "index items_qty already exists",
    _sql(
        "CREATE INDEX IF NOT EXISTS items_qty ON items (qty)",
        "CREATE INDEX items_qty ON items (qty)",
    ),
)
FAM.add(
    "unique_sku",
    EXISTS,
    "UNIQUE constraint failed: items.sku",
    _sql("INSERT INTO items (sku, qty) VALUES ('A-1', 1)"),
)
FAM.add(
    "not_null",
    INT,
    "NOT NULL constraint failed: items.qty (the caller's row)",
    _sql("INSERT INTO items (sku) VALUES ('C-3')"),
)
FAM.add(
    "foreign_key",
    INT,
    "FOREIGN KEY constraint failed (an order for an item that does not exist)",
    _sql("PRAGMA foreign_keys = ON", "INSERT INTO orders (item) VALUES (404)"),
)
FAM.add(
    "page_cap",
    QUOTA,
    "database or disk is full (PRAGMA max_page_count caps the file)",
    _sql(
        "PRAGMA max_page_count = 8",
        "CREATE TABLE IF NOT EXISTS blobs (b BLOB)",
        "INSERT INTO blobs VALUES (zeroblob(200000))",
        db=lambda c: c.work / "capped.db",
    ),
)
FAM.add(
    "too_big",
    INT | QUOTA,
    "string or blob too big: SQLITE_LIMIT_LENGTH set to 1000 on the connection",
    _sql("SELECT zeroblob(5000)", prepare=_short_limit),
)
FAM.add(
    "interrupted",
    TO,
    "interrupted: Connection.interrupt at the pack's 0.3 s deadline (an endless query)",
    _interrupted,
)
FAM.add(
    "bindings",
    INT,
    "the pack's own bug: two placeholders, one binding supplied",
    _bindings,
)
FAM.add(
    "closed_connection",
    INT,
    "the pack's own bug: a query on a connection it already closed",
    _closed,
)
