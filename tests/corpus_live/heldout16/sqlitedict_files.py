"""sqlitedict (a persistent dict over the standard ``sqlite3`` module, SQLite 3.40 of Debian
12; its queries run on a worker thread of its own and their errors are re-raised in the
caller) on real local files made by the setup: a store with keys, a file that is no
database, a database whose table of the same name has other columns, a directory where a
file is expected. Nothing is faked. The failures are ``KeyError``, sqlitedict's own
``RuntimeError``/``IOError`` checks, pickle errors and ``sqlite3`` exceptions."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_live.core import INT, NF, family


@dataclass
class Files:
    store: Path  # table "kv" with keys "a" and "b"
    not_db: Path  # a file of the right name that is no SQLite database
    foreign: Path  # an SQLite database whose table "kv" has other columns
    dir_path: Path  # a directory where a database file is expected
    work: Path


def _files(stack: contextlib.ExitStack, work: Path) -> Files:
    from sqlitedict import SqliteDict  # type: ignore[import-untyped]

    store = work / "store.sqlite"
    with SqliteDict(str(store), tablename="kv", autocommit=True) as d:
        d["a"] = {"n": 1}
        d["b"] = [1, 2, 3]
    not_db = work / "notes.sqlite"
    not_db.write_bytes(b"these are plain notes, not a database\n" * 200)
    foreign = work / "foreign.sqlite"
    with contextlib.closing(sqlite3.connect(foreign)) as con:
        con.executescript("CREATE TABLE kv (id INTEGER PRIMARY KEY, payload TEXT);")
    dir_path = work / "a-directory.sqlite"
    dir_path.mkdir()
    return Files(store, not_db, foreign, dir_path, work)


FAM = family("sqlitedict", "sqlitedict on local SQLite files, real", _files, half="heldout16")


def _open(path: Callable[[Files], Path], op: Callable[[Any], Any], **kw: Any) -> Any:
    def run(f: Files) -> None:
        from sqlitedict import SqliteDict

        d = SqliteDict(str(path(f)), **{"tablename": "kv", **kw})
        try:
            op(d)
        finally:
            with contextlib.suppress(Exception):
                d.close()

    return run


def _store(f: Files) -> Path:
    return f.store


def _set(d: Any, key: str, value: Any) -> None:
    d[key] = value
    d.commit()


def _write_after_close(d: Any) -> None:
    d.close()
    _set(d, "c", 1)


def _unpicklable(d: Any) -> None:
    _set(d, "lock", threading.Lock())


FAM.add(
    "missing_key",
    NF,
    "KeyError: key ghost is not in the store",
    _open(_store, lambda d: d["ghost"]),
)
FAM.add(
    "delete_missing_key",
    NF,
    "KeyError: del of a key that is not in the store",
    _open(_store, lambda d: d.__delitem__("ghost")),
)
FAM.add(
    "readonly_missing_table",
    NF,
    "RuntimeError: read-only open (flag r) of a table the file does not have",
    _open(_store, lambda d: d["a"], tablename="ghost_table", flag="r"),
)
FAM.add(
    "readonly_write",
    INT,
    "RuntimeError: Refusing to write to read-only SqliteDict (the pack opened it with flag r)",
    _open(_store, lambda d: _set(d, "c", 1), flag="r"),
)
FAM.add(
    "missing_directory",
    NF,
    "RuntimeError: the directory of the database file does not exist",
    _open(lambda f: f.work / "no-such-dir" / "x.sqlite", lambda d: d["a"]),
)
FAM.add(
    "readonly_missing_file",
    NF,
    "read-only open of a database file that does not exist",
    _open(lambda f: f.work / "ghost.sqlite", lambda d: d["a"], flag="r"),
)
FAM.add(
    "not_a_database",
    INT,
    "sqlite3.DatabaseError: file is not a database",
    _open(lambda f: f.not_db, lambda d: d["a"]),
)
FAM.add(
    "foreign_table",
    INT,
    "sqlite3.OperationalError: table kv of another program has no key/value columns",
    _open(lambda f: f.foreign, lambda d: d["a"]),
)
FAM.add(
    "directory_not_file",
    INT | NF,
    "sqlite3.OperationalError: unable to open database file (the path is a directory)",
    _open(lambda f: f.dir_path, lambda d: d["a"]),
)
FAM.add(
    "unpicklable_value",
    INT,
    "TypeError: a threading.Lock cannot be pickled (the pack's value)",
    _open(_store, _unpicklable),
)
FAM.add(
    "wrong_decoder",
    INT,
    "json.loads on values stored pickled: the stored data does not decode",
    _open(_store, lambda d: d["a"], decode=json.loads),
)
FAM.add(
    "bad_flag",
    INT,
    "RuntimeError: Unrecognized flag (the pack's option)",
    _open(_store, lambda d: d["a"], flag="rw"),
)
FAM.add(
    "use_after_close",
    INT,
    "a write after close(): the worker thread is gone (the pack's bug)",
    _open(_store, _write_after_close),
)
