"""The incident store's embedded backend: one SQLite file (the default)."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from control_plane._features.observability.incident_backend import (
    EVENT_COLUMNS,
    INCIDENT_COLUMNS,
    SCHEMA_VERSION,
    IncidentBackend,
    Row,
)

__all__ = ["SqliteBackend"]

logger = logging.getLogger("capability_packs.incidents")

#: Events are unique by ``(created_at, event_id)``: a record delivered twice carries both
#: (they are the event's own) and is written once, and the index that enforces it is also
#: the one time-window queries read. Its keys arrive in time order, so an insert touches
#: the index's last page; a key of the random ``event_id`` alone (schema 1) touched a random
#: page of an index of up to ``max_rows`` entries: at 100,000 rows that cost 22.8 us of
#: writer CPU per event against 9.2 us now (SQLite alone, batches of 64).
_EVENTS_TABLE = """CREATE TABLE IF NOT EXISTS events (
        event_id TEXT NOT NULL,
        created_at REAL NOT NULL,
        event TEXT NOT NULL,
        code TEXT NOT NULL,
        pack TEXT NOT NULL,
        version TEXT,
        origin TEXT NOT NULL,
        retryable INTEGER NOT NULL,
        reference_id TEXT,
        request_id TEXT,
        body TEXT NOT NULL,
        UNIQUE (created_at, event_id)
    )"""
_EVENTS_KEY = "UNIQUE (created_at, event_id)"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS incidents (
        reference_id TEXT PRIMARY KEY,
        pack TEXT NOT NULL,
        request_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        summary TEXT NOT NULL,
        traceback TEXT NOT NULL,
        created_at REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS incidents_created_at ON incidents(created_at)",
    _EVENTS_TABLE,
)

_INSERT_INCIDENT = (
    f"INSERT OR IGNORE INTO incidents ({INCIDENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_EVENT = (
    f"INSERT OR IGNORE INTO events ({EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _migrate_events(conn: sqlite3.Connection) -> None:
    """Rebuild a schema-1 ``events`` table (``event_id`` its primary key) with the
    schema-2 key, keeping every row; inside the caller's write transaction."""
    # Schema 1's time index is redundant with the key (an older version opening this file
    # made it again): every index is one more page written per event.
    conn.execute("DROP INDEX IF EXISTS events_created_at")
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'")
    found = row.fetchone()
    if found is None or _EVENTS_KEY in found[0]:
        return
    conn.execute("ALTER TABLE events RENAME TO events_schema1")
    conn.execute(_EVENTS_TABLE)
    conn.execute(
        f"INSERT OR IGNORE INTO events ({EVENT_COLUMNS})"
        f" SELECT {EVENT_COLUMNS} FROM events_schema1 ORDER BY rowid"
    )
    conn.execute("DROP TABLE events_schema1")
    logger.info("incident store: events table moved to schema %d", SCHEMA_VERSION)


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class SqliteBackend(IncidentBackend):
    """Incidents and events in one SQLite file (WAL), shared by the processes of one host."""

    errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, path: Path, *, busy_timeout: float) -> None:
        self.path = path
        self.location = str(path)
        self.anchor = path
        self._busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None
        #: The file the writer's connection opened (device, inode): see ``_writer``.
        self._opened: tuple[int, int] | None = None

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=True
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        # WAL + NORMAL: no fsync per commit (one per checkpoint); still crash-safe, only a
        # power loss may drop the last commits. FULL cost ~270 us CPU and ~4 ms per write.
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def prepare(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self.path.exists():
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                conn = self._connect()
                try:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute("BEGIN IMMEDIATE")
                    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
                    if found > SCHEMA_VERSION:
                        # Its tables may not be ours any more: never write into them.
                        raise sqlite3.DatabaseError(
                            f"written by a newer version (schema {found}; this version "
                            f"knows up to {SCHEMA_VERSION})"
                        )
                    _migrate_events(conn)
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    conn.execute("COMMIT")
                finally:
                    conn.close()
                return
            except sqlite3.OperationalError as exc:
                # Another process may hold the lock while switching to WAL; try again.
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    # -- the writer's connection ---------------------------------------------------------

    def _identity(self) -> tuple[int, int] | None:
        """The file now at ``path`` (device, inode), ``None`` when there is none."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _writer(self) -> sqlite3.Connection:
        """The writer's connection to the database file that is at ``path`` now.

        It is kept while it still names that file. When the file was removed, renamed or
        replaced (or after :meth:`discard`), the store is set up again at ``path`` (schema
        created when the file is new) and connected."""
        identity = self._identity()
        conn = self._conn
        if conn is not None and identity is not None and identity == self._opened:
            return conn
        if conn is not None:
            logger.warning(
                "incident store %s: the database file was removed or replaced; reopening",
                self.path,
            )
            self.discard()
        try:
            self.prepare()  # idempotent: creates the file and schema when missing
        except OSError as exc:
            raise sqlite3.OperationalError(f"cannot open the database: {exc}") from exc
        self._conn = self._connect()
        self._opened = self._identity()
        return self._conn

    def discard(self) -> None:
        conn, self._conn, self._opened = self._conn, None, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def write(self, incidents: Sequence[Row], events: Sequence[Row]) -> None:
        conn = self._writer()
        try:
            with _transaction(conn):
                if incidents:
                    conn.executemany(_INSERT_INCIDENT, incidents)
                if events:
                    conn.executemany(_INSERT_EVENT, events)
        except sqlite3.OperationalError:
            raise  # locked, full disk: the same connection may retry
        except sqlite3.Error:
            self.discard()  # a corrupt or foreign file: reconnect to retry
            raise

    @contextlib.contextmanager
    def _changing(self) -> Iterator[sqlite3.Connection]:
        # any thread's (``IncidentStore.prune``): its own connection
        with contextlib.closing(self._connect()) as conn, _transaction(conn):
            yield conn

    # -- reading -------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.path.exists()

    @contextlib.contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        try:
            conn.execute("PRAGMA query_only = 1")
            yield conn
        finally:
            conn.close()

    def _rows(self, query: str, params: Sequence[Any]) -> list[Row]:
        with self._reader() as conn:
            return conn.execute(query, params).fetchall()

    def read_integrity(self) -> str:
        with self._reader() as conn:
            return str(conn.execute("PRAGMA integrity_check").fetchone()[0])

    def unreadable(self, exc: Exception, *, doing: str = "read") -> str:
        """Path, SQLite's words, and the schema version when the file was written by a
        newer version of this product."""
        reason = f"cannot {doing} the incident store {self.path}: {exc}"
        if os.path.isdir(self.path):
            return f"{reason} (it is a directory)"
        version = None
        with contextlib.suppress(sqlite3.Error), contextlib.closing(self._connect()) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version is not None and version > SCHEMA_VERSION:
            return (
                f"{reason} (written by a newer version: schema {version}, this version "
                f"knows up to {SCHEMA_VERSION})"
            )
        return reason
