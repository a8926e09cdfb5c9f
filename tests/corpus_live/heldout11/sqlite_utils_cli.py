"""The ``sqlite-utils`` CLI (the Python package's console script, beside the interpreter) run as a
pack runs it (a sub-command and a database path on argv, JSON input from files, a subprocess
deadline) on real SQLite files the setup writes to the family's scratch directory (a table with
a primary key and a NOT NULL column, a file that is not a database). The failure is the exit
status and ``Error: ...`` (or the Python traceback the tool lets escape) on stderr. Nothing is
faked."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import EXISTS, INT, NF, family
from corpus_live.core import cli as run_cli


@dataclass
class Files:
    dir: Path

    @property
    def db(self) -> str:
        return str(self.dir / "app.db")


_TOOL = Path(sys.executable).with_name("sqlite-utils")


def _setup(stack: contextlib.ExitStack, work: Path) -> Files:
    if not _TOOL.exists():
        raise RuntimeError(f"not installed: {_TOOL} (the corpus extra: sqlite-utils)")
    files = Files(work)
    run_cli([str(_TOOL), "create-table", files.db, "items", "id", "integer", "name", "text",
             "--pk", "id", "--not-null", "name"])  # fmt: skip
    inputs = {
        "one.json": [{"id": 1, "name": "one"}],
        "nameless.json": [{"id": 3}],
    }
    for name, rows in inputs.items():
        (work / name).write_text(json.dumps(rows))
    (work / "broken.json").write_text('[{"id": 4, "name": "four"')
    (work / "notes.db").write_text("these are plain notes, not an SQLite database\n")
    run_cli([str(_TOOL), "insert", files.db, "items", str(work / "one.json"), "--pk", "id"])
    return files


FAM = family(
    "sqlite-utils",
    "the sqlite-utils CLI on local SQLite files, real",
    _setup,
    half="heldout11",
)


def _su(*args: str) -> Callable[[Files], None]:
    def run(f: Files) -> None:
        argv = [a.replace("{db}", f.db).replace("{dir}", str(f.dir)) for a in args]
        run_cli([str(_TOOL), *argv], timeout=10)

    return run


FAM.add(
    "table_exists",
    EXISTS,
    "create-table of a table that already exists",
    _su("create-table", "{db}", "items", "id", "integer", "--pk", "id"),
)
FAM.add(
    "rows_missing_table",
    NF,
    "rows of a table that does not exist",
    _su("rows", "{db}", "orders"),
)
FAM.add(
    "drop_missing_table",
    NF,
    "drop-table of a table that does not exist",
    _su("drop-table", "{db}", "orders"),
)
FAM.add(
    "duplicate_pk",
    EXISTS | INT,
    "UNIQUE constraint failed: insert of a row whose primary key is there",
    _su("insert", "{db}", "items", "{dir}/one.json", "--pk", "id"),
)
FAM.add(
    "duplicate_column",
    EXISTS | INT,
    "add-column of a column the table has",
    _su("add-column", "{db}", "items", "name", "text"),
)
FAM.add(
    "invalid_json",
    INT,
    "insert from a JSON file that is cut short",
    _su("insert", "{db}", "items", "{dir}/broken.json", "--pk", "id"),
)
FAM.add(
    "not_null",
    INT,
    "NOT NULL constraint failed: a row without its name",
    _su("insert", "{db}", "items", "{dir}/nameless.json", "--pk", "id"),
)
FAM.add(
    "missing_directory",
    NF | INT,
    "unable to open database file: its directory does not exist",
    _su("query", "{dir}/no/such/dir/app.db", "select 1"),
)
FAM.add(
    "not_a_database",
    INT,
    "file is not a database: the path holds plain text",
    _su("query", "{dir}/notes.db", "select * from sqlite_master"),
)
FAM.add("sql_syntax", INT, "syntax error in the pack's SQL", _su("query", "{db}", "selec 1"))
FAM.add(
    "query_missing_table",
    NF | INT,
    "no such table in the pack's query",
    _su("query", "{db}", "select * from orders"),
)
FAM.add(
    "unknown_option",
    INT,
    "the pack passes an option the sub-command does not have (usage error)",
    _su("tables", "{db}", "--frobnicate"),
)
FAM.add(
    "transform_missing_table",
    NF | INT,
    "transform of a table that does not exist: a ValueError escapes the tool",
    _su("transform", "{db}", "orders", "--drop", "x"),
)
FAM.add(
    "missing_input",
    NF | INT,
    "insert from a JSON file that does not exist",
    _su("insert", "{db}", "items", "{dir}/missing.json", "--pk", "id"),
)
