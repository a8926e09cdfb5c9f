"""DuckDB (the ``duckdb`` Python package, the engine in-process) on local files, real: a
database another process holds open (DuckDB's file lock), a file that is no DuckDB database, a
missing file or directory, read-only attachments, catalog and constraint errors, a CSV that
is missing or malformed, a memory limit, and a query the pack interrupts at its deadline.
The failure is one of ``duckdb``'s exception classes (``IOException``, ``CatalogException``,
``ConstraintException``...) with DuckDB's own message."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import EXISTS, INT, NET, NF, TO, family


@dataclass
class Files:
    db: Path  # tables t (id INTEGER PRIMARY KEY, name VARCHAR), events
    held: Path  # a database another process keeps open read-write
    not_db: Path  # a file of the right name that is no DuckDB database
    bad_csv: Path  # a CSV with a word in a column of numbers
    work: Path


_HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE IF NOT EXISTS x (i INTEGER)")
print("ready", flush=True)
sys.stdin.read()
"""


def _files(stack: contextlib.ExitStack, work: Path) -> Files:
    import duckdb

    db = work / "app.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL)")
    con.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")
    con.execute("CREATE TABLE events AS SELECT range AS i, 'e' || range AS s FROM range(10)")
    con.close()
    held = work / "held.duckdb"
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
        raise RuntimeError("the DuckDB holder process did not start")
    not_db = work / "report.duckdb"
    not_db.write_bytes(b"PK\x03\x04 this is a zip archive, not a database" + b"\x00" * 8192)
    bad_csv = work / "orders.csv"
    bad_csv.write_text("id,amount\n1,10\n2,twenty\n3,30\n")
    return Files(db, held, not_db, bad_csv, work)


FAM = family("duckdb", "DuckDB on local files, real", _files, half="heldout5")


def _sql(*statements: str, db: Any = None, read_only: bool = False) -> Any:
    def run(c: Files) -> None:
        import duckdb

        path = c.db if db is None else db(c)
        con = duckdb.connect(str(path), read_only=read_only)
        try:
            for s in statements:
                con.execute(s).fetchall()
        finally:
            con.close()

    return run


def _interrupted(c: Files) -> None:
    import duckdb

    con = duckdb.connect(str(c.db), read_only=True)
    timer = threading.Timer(0.3, con.interrupt)  # the pack's deadline
    timer.start()
    try:
        con.execute(
            "SELECT count(*) FROM range(100000000000) a, range(10) b WHERE a.range * b.range = -1"
        ).fetchall()
    finally:
        timer.cancel()
        con.close()


FAM.add(
    "locked_by_other",
    NET | TO,
    "IOException: could not set lock on file: conflicting lock held by another process",
    _sql("SELECT 1", db=lambda c: c.held),
)
FAM.add(
    "not_a_database",
    INT,
    "IOException: the file is not a valid DuckDB database file",
    _sql("SELECT 1", db=lambda c: c.not_db),
)
FAM.add(
    "missing_read_only",
    NF,
    "IOException: cannot open database in read-only mode: database does not exist",
    _sql("SELECT 1", db=lambda c: c.work / "archive.duckdb", read_only=True),
)
FAM.add(
    "missing_dir",
    NF,
    "IOException: cannot open file: No such file or directory (its directory is missing)",
    _sql("SELECT 1", db=lambda c: c.work / "no" / "dir" / "x.duckdb"),
)
FAM.add(
    "read_only_write",
    INT,
    "InvalidInputException: cannot execute INSERT on a database attached read-only",
    _sql("INSERT INTO t VALUES (3, 'three')", read_only=True),
)
FAM.add(
    "no_table",
    NF,
    "CatalogException: Table with name orders does not exist",
    _sql("SELECT * FROM orders", read_only=True),
)
FAM.add(
    "table_exists",
    EXISTS,
    "CatalogException: Table with name t already exists",
    _sql("CREATE TABLE t (x INTEGER)"),
)
FAM.add(
    "duplicate_key",
    EXISTS,
    "ConstraintException: duplicate key id 1 violates primary key constraint",
    _sql("INSERT INTO t VALUES (1, 'again')"),
)
FAM.add(
    "not_null",
    INT,
    "ConstraintException: NOT NULL constraint failed: t.name (the pack's input)",
    _sql("INSERT INTO t VALUES (5, NULL)"),
)
FAM.add(
    "conversion",
    INT,
    "ConversionException: could not convert string 'seven' to INT32",
    _sql("INSERT INTO t VALUES ('seven', 'x')"),
)
FAM.add(
    "syntax",
    INT,
    "ParserException: syntax error at or near",
    _sql("SELEC * FROM t", read_only=True),
)
FAM.add(
    "csv_missing",
    NF,
    "IOException: no files found that match the pattern",
    lambda c: _sql(f"SELECT * FROM read_csv('{c.work / 'exports' / 'q3.csv'}')")(c),
)
FAM.add(
    "csv_malformed",
    INT,
    "ConversionException: CSV error, 'twenty' in an INTEGER column the pack declared",
    lambda c: _sql(
        f"SELECT * FROM read_csv('{c.bad_csv}', header = true, "
        "columns = {'id': 'INTEGER', 'amount': 'INTEGER'})"
    )(c),
)
FAM.add(
    "memory_limit",
    INT,
    "OutOfMemoryException: could not allocate (memory_limit 8 MB for a large sort)",
    _sql(
        "SET memory_limit = '8MB'",
        "SET preserve_insertion_order = false",
        "SET temp_directory = ''",
        "SELECT string_agg(repeat('x', 100) || range::VARCHAR, ',') FROM range(2000000)",
    ),
)
FAM.add(
    "interrupted",
    TO,
    "InterruptException: the pack interrupts the query at its 0.3 s deadline",
    _interrupted,
)
