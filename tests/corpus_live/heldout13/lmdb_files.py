"""py-lmdb (the Python binding of LMDB, the memory-mapped key-value store) on real local
environments made in the case's scratch directory: a map size too small for the data, a
``max_dbs`` and a ``max_readers`` cap, read-only opens, a file that is no LMDB environment,
missing paths and named databases, a name that is a plain key, not a database, LMDB's own
key-size limit. The failures are py-lmdb's exception classes (``lmdb.MapFullError``,
``lmdb.NotFoundError``, ``lmdb.BadValsizeError``...) carrying LMDB's ``mdb_*`` messages.
Nothing is faked."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus_live.core import INT, NF, QUOTA, RL, family


def _setup(stack: contextlib.ExitStack, work: Path) -> Path:
    import lmdb

    base = work / "lmdb"
    base.mkdir()
    # a store with a plain named database and some data, as an application left it
    env = lmdb.open(str(base / "store"), max_dbs=4, map_size=1 << 20)
    with env.begin(write=True) as txn:
        db = env.open_db(b"sessions", txn=txn)
        txn.put(b"user:1", b"alice", db=db)
        txn.put(b"config", b"{}")  # a plain key in the main database
    env.close()
    # a directory whose data file is no LMDB file
    (base / "broken").mkdir()
    (base / "broken" / "data.mdb").write_bytes(b"SQLite format 3\x00" + b"\x00" * 8176)
    (base / "a-file").write_text("not a directory\n")
    return base


FAM = family("lmdb", "local LMDB environments (py-lmdb), real", _setup, half="heldout13")

_fresh = itertools.count()


def _new_env(base: Path, **kw: Any) -> Any:
    import lmdb

    return lmdb.open(str(base / f"env-{next(_fresh)}"), **kw)


def _case(op: Callable[[Path], Any]) -> Callable[[Path], None]:
    def run(base: Path) -> None:
        op(base)

    return run


def _map_full(base: Path) -> None:
    env = _new_env(base, map_size=64 * 1024)
    try:
        with env.begin(write=True) as txn:
            for i in range(200):
                txn.put(b"blob:%04d" % i, b"x" * 1024)
    finally:
        env.close()


FAM.add(
    "map_full",
    QUOTA,
    "MDB_MAP_FULL: the environment's map size (64 KiB) is too small for the writes",
    _case(_map_full),
)


def _write_read_only(base: Path) -> None:
    import lmdb

    env = lmdb.open(str(base / "store"), readonly=True, max_dbs=4)
    try:
        with env.begin(write=True) as txn:
            txn.put(b"user:2", b"bob")
    finally:
        env.close()


FAM.add(
    "write_read_only_env",
    INT,
    "a write transaction on an environment the pack opened readonly=True",
    _case(_write_read_only),
)


def _missing_path(base: Path) -> None:
    import lmdb

    lmdb.open(str(base / "no-such-store"), create=False).close()


FAM.add(
    "missing_environment",
    NF,
    "create=False on a path that does not exist: No such file or directory",
    _case(_missing_path),
)


def _not_lmdb(base: Path) -> None:
    import lmdb

    lmdb.open(str(base / "broken"), create=False).close()


FAM.add(
    "not_an_lmdb_file",
    INT,
    "MDB_INVALID: the data file is not an LMDB file",
    _case(_not_lmdb),
)


def _file_as_dir(base: Path) -> None:
    import lmdb

    lmdb.open(str(base / "a-file")).close()


FAM.add(
    "path_is_a_file",
    INT,
    "the environment path (subdir=True) is a regular file: Not a directory",
    _case(_file_as_dir),
)


def _missing_db(base: Path) -> None:
    import lmdb

    env = lmdb.open(str(base / "store"), max_dbs=4)
    try:
        env.open_db(b"carts", create=False)
    finally:
        env.close()


FAM.add(
    "missing_named_db",
    NF,
    "MDB_NOTFOUND: no named database 'carts' (create=False)",
    _case(_missing_db),
)


def _dbs_full(base: Path) -> None:
    env = _new_env(base, max_dbs=1)
    try:
        env.open_db(b"one")
        env.open_db(b"two")
    finally:
        env.close()


FAM.add(
    "max_dbs_reached",
    QUOTA | INT,
    "MDB_DBS_FULL: the environment was opened with max_dbs=1, a second named db is refused",
    _case(_dbs_full),
)


def _readers_full(base: Path) -> None:
    env = _new_env(base, max_readers=1)
    try:
        first = env.begin()
        try:
            second = env.begin()
            second.abort()
        finally:
            first.abort()
    finally:
        env.close()


FAM.add(
    "readers_full",
    RL | INT,
    "MDB_READERS_FULL: every reader slot (max_readers=1) is taken by a live transaction",
    _case(_readers_full),
)


def _long_key(base: Path) -> None:
    env = _new_env(base)
    try:
        with env.begin(write=True) as txn:
            txn.put(b"k" * 600, b"v")
    finally:
        env.close()


FAM.add(
    "key_too_long",
    INT,
    "MDB_BAD_VALSIZE: a 600-byte key, over LMDB's 511-byte key limit (the pack's input)",
    _case(_long_key),
)


def _empty_key(base: Path) -> None:
    env = _new_env(base)
    try:
        with env.begin(write=True) as txn:
            txn.put(b"", b"v")
    finally:
        env.close()


FAM.add("empty_key", INT, "MDB_BAD_VALSIZE: an empty key (the pack's input)", _case(_empty_key))


def _incompatible(base: Path) -> None:
    import lmdb

    env = lmdb.open(str(base / "store"), max_dbs=4)
    try:
        env.open_db(b"config", create=False)
    finally:
        env.close()


FAM.add(
    "name_is_not_a_db",
    INT,
    "MDB_INCOMPATIBLE: the name the pack opens as a database is a plain key of the main db",
    _case(_incompatible),
)


def _closed_env(base: Path) -> None:
    env = _new_env(base)
    env.close()
    with env.begin() as txn:
        txn.get(b"x")


FAM.add(
    "closed_environment",
    INT,
    "a transaction on an environment the pack already closed",
    _case(_closed_env),
)


def _finished_txn(base: Path) -> None:
    env = _new_env(base)
    try:
        txn = env.begin(write=True)
        txn.put(b"a", b"1")
        txn.commit()
        txn.put(b"b", b"2")
    finally:
        env.close()


FAM.add(
    "committed_transaction",
    INT,
    "a put on a transaction the pack already committed",
    _case(_finished_txn),
)


def _huge_map(base: Path) -> None:
    env = _new_env(base, map_size=1 << 62)
    env.close()


FAM.add(
    "map_too_large",
    INT | QUOTA,
    "a 4 EiB map size: the memory map cannot be made (Cannot allocate memory)",
    _case(_huge_map),
)
