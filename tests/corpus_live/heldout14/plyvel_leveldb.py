"""plyvel (Python bindings to LevelDB, the ``plyvel`` wheel with its bundled libleveldb)
opening real LevelDB databases in the family's scratch directory: one the setup fills, one a
second Python process holds open (LevelDB's ``LOCK`` file), one whose ``CURRENT`` file is
overwritten the way a torn copy leaves it. Every failure is LevelDB's own status (or plyvel's
own check of its arguments). Nothing is faked; no network is involved."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plyvel  # type: ignore[import-untyped]

from corpus_live.core import EXISTS, INT, NF, family


@dataclass
class Dbs:
    work: Path
    filled: Path  # a database with a few keys, closed
    held: Path  # a database another process keeps open
    torn: Path  # a database whose CURRENT names a manifest that is not there


_HOLDER = """
import sys, time, plyvel
db = plyvel.DB(sys.argv[1], create_if_missing=True)
print("ready", flush=True)
sys.stdin.read()
db.close()
"""


def _setup(stack: contextlib.ExitStack, work: Path) -> Dbs:
    filled = work / "filled"
    db = plyvel.DB(str(filled), create_if_missing=True)
    for i in range(5):
        db.put(f"k{i}".encode(), f"v{i}".encode())
    db.close()
    held = work / "held"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(held)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )

    def stop() -> None:
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    stack.callback(stop)
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != b"ready":
        raise RuntimeError("the LevelDB holder process did not open its database")
    torn = work / "torn"
    plyvel.DB(str(torn), create_if_missing=True).close()
    (torn / "CURRENT").write_text("MANIFEST-000042\n")
    return Dbs(work, filled, held, torn)


FAM = family(
    "plyvel",
    "plyvel against real LevelDB databases on disk",
    _setup,
    half="heldout14",
)


def _open(path: Callable[[Dbs], Path], **kw: Any) -> Callable[[Dbs], None]:
    def run(c: Dbs) -> None:
        plyvel.DB(str(path(c)), **kw).close()

    return run


FAM.add(
    "missing_db",
    NF,
    "the database directory does not exist and create_if_missing is off",
    _open(lambda c: c.work / "ghost"),
)
FAM.add(
    "db_exists",
    EXISTS,
    "error_if_exists: the database is already there",
    _open(lambda c: c.filled, create_if_missing=True, error_if_exists=True),
)
FAM.add(
    "locked_by_process",
    INT,
    "another process holds the database's LOCK file",
    _open(lambda c: c.held),
)


def _twice(c: Dbs) -> None:
    first = plyvel.DB(str(c.filled))
    try:
        plyvel.DB(str(c.filled)).close()
    finally:
        first.close()


FAM.add("locked_in_process", INT, "the same process opens the database twice", _twice)
FAM.add(
    "torn_current",
    INT,
    "CURRENT names a MANIFEST file that is not there (a torn copy)",
    _open(lambda c: c.torn),
)


def _not_a_dir(c: Dbs) -> None:
    f = c.work / "plain-file"
    f.write_text("not a database\n")
    plyvel.DB(str(f / "db"), create_if_missing=True).close()


FAM.add("not_a_directory", INT | NF, "the path goes through a plain file", _not_a_dir)
FAM.add(
    "parent_missing",
    NF | INT,
    "create_if_missing under a directory that does not exist",
    _open(lambda c: c.work / "no" / "such" / "parent", create_if_missing=True),
)
FAM.add(
    "bad_compression",
    INT,
    "plyvel's own check: an unknown compression name",
    _open(lambda c: c.filled, compression="zip"),
)


def _closed(c: Dbs) -> None:
    db = plyvel.DB(str(c.filled))
    db.close()
    db.get(b"k1")


FAM.add("closed_db", INT, "a read on a database the caller already closed", _closed)


def _str_key(c: Dbs) -> None:
    db = plyvel.DB(str(c.filled))
    try:
        db.put("k9", b"v9")
    finally:
        db.close()


FAM.add("str_key", INT, "the caller passes a str key where bytes are required", _str_key)


def _write_closed_batch(c: Dbs) -> None:
    db = plyvel.DB(str(c.filled))
    batch = db.write_batch()
    batch.put(b"k8", b"v8")
    db.close()
    batch.write()


FAM.add(
    "batch_after_close",
    INT,
    "a write batch written after its database was closed",
    _write_closed_batch,
)
