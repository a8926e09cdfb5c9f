"""The ``sqlite3`` CLI (Debian's ``sqlite3``) run as a pack runs it: a script on stdin with
``-bail``, against database files in a scratch directory. Each failure is the exit status and
the ``Parse error``/``Runtime error near line N: ... (extended code)`` stderr lines."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import EXISTS, INT, NET, NF, TO, cli, family, require


@dataclass
class Files:
    db: Path  # tables t (id primary key, name not null), parent/child (foreign key)
    not_db: Path  # a text file


def _setup(stack: contextlib.ExitStack, work: Path) -> Files:
    require("sqlite3")
    db = work / "app.db"
    subprocess.run(
        ["sqlite3", str(db)],
        input=b"CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL CHECK (length(name) <= 8));"
        b"INSERT INTO t VALUES (1, 'one');"
        b"CREATE TABLE parent (id INTEGER PRIMARY KEY);"
        b"CREATE TABLE child (pid INTEGER REFERENCES parent(id));",
        check=True,
        capture_output=True,
    )
    not_db = work / "notes.db"
    not_db.write_text("these are notes, not a database\n" * 40)
    return Files(db, not_db)


FAM = family("sqlite3", "the sqlite3 CLI on local files", _setup, half="heldout3")


def _run(path: Path, sql: str, *flags: str) -> None:
    cli(["sqlite3", "-bail", *flags, str(path)], input=sql.encode(), timeout=15)


def _sql(sql: str, *flags: str) -> Any:
    return lambda c: _run(c.db, sql, *flags)


def _locked(c: Files) -> None:
    holder = sqlite3.connect(c.db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        _run(c.db, ".timeout 200\nINSERT INTO t VALUES (5, 'five');")
    finally:
        holder.close()


FAM.add("no_table", NF, "Parse error: no such table", _sql("SELECT * FROM missing_t;"))
FAM.add(
    "no_column",
    NF | INT,
    "Parse error: no such column (the pack's query)",
    _sql("SELECT nosuch FROM t;"),
)
FAM.add(
    "unique",
    EXISTS,
    "Runtime error: UNIQUE constraint failed: t.id (19)",
    _sql("INSERT INTO t VALUES (1, 'dup');"),
)
FAM.add("table_exists", EXISTS, "Parse error: table t already exists", _sql("CREATE TABLE t (x);"))
FAM.add(
    "not_null",
    INT,
    "Runtime error: NOT NULL constraint failed: t.name (19)",
    _sql("INSERT INTO t VALUES (2, NULL);"),
)
FAM.add(
    "check",
    INT,
    "Runtime error: CHECK constraint failed (19): the pack's input",
    _sql("INSERT INTO t VALUES (3, 'far too long a name');"),
)
FAM.add(
    "foreign_key",
    INT,
    "Runtime error: FOREIGN KEY constraint failed (19)",
    _sql("PRAGMA foreign_keys = ON;\nINSERT INTO child VALUES (42);"),
)
FAM.add("syntax", INT, 'Parse error: near "SELEC": syntax error', _sql("SELEC 1;"))
FAM.add(
    "too_big",
    INT,
    "Runtime error: string or blob too big (18): it never passes",
    _sql("SELECT length(zeroblob(2000000000));"),
)
FAM.add(
    "readonly",
    INT,
    "Runtime error: attempt to write a readonly database (8) (opened -readonly)",
    _sql("INSERT INTO t VALUES (4, 'four');", "-readonly"),
)
FAM.add(
    "locked",
    TO | NET,
    "Runtime error: database is locked (5): another connection holds it past .timeout 200",
    _locked,
)
FAM.add(
    "no_such_dir",
    NF,
    "Error: unable to open database: the directory does not exist",
    lambda c: _run(c.db.parent / "nodir" / "x.db", "SELECT 1;"),
)
FAM.add(
    "not_a_database",
    INT,
    "file is not a database (26)",
    lambda c: _run(c.not_db, "SELECT * FROM sqlite_master;"),
)
