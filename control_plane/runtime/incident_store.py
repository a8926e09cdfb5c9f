"""The incident store: incidents and error events at rest, in embedded SQLite, written
behind a bounded queue by a thread of its own; a built-in plugin on the
``incident_recorded`` hook (docs/observability.md, "Incident store")."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias

import orjson

from control_plane.core.hookspecs import hookimpl
from control_plane.core.incidents import Incident
from control_plane.core.redact import scrub, scrub_data
from control_plane.runtime.events import ErrorEvent
from control_plane.runtime.journal import IncidentJournal, find, orphaned, read_journal

__all__ = [
    "DEFAULT_MAX_AGE",
    "DEFAULT_MAX_ROWS",
    "ENV_INCIDENT_DB",
    "GroupBy",
    "IncidentStore",
    "IncidentStoreUnreadable",
    "default_incident_db",
    "open_local_store",
]

logger = logging.getLogger("capability_packs.incidents")

ENV_INCIDENT_DB = "CAPABILITY_PACKS_INCIDENT_DB"
DEFAULT_MAX_AGE = 30 * 24 * 3600.0
DEFAULT_MAX_ROWS = 100_000
DEFAULT_PRUNE_INTERVAL = 60.0
DEFAULT_QUEUE_SIZE = 10_000
#: Seconds the writer waits after the first queued record before writing the batch.
DEFAULT_LINGER = 0.05

GroupBy: TypeAlias = Literal["code", "pack", "origin"]
_GROUP_COLUMNS: dict[str, str] = {"code": "code", "pack": "pack", "origin": "origin"}

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
#: 2: events unique by ``(created_at, event_id)`` instead of ``event_id`` alone.
_SCHEMA_VERSION = 2
_EVENT_COLUMNS = (
    "event_id, created_at, event, code, pack, version, origin, retryable, reference_id,"
    " request_id, body"
)

_INSERT_INCIDENT = (
    "INSERT OR IGNORE INTO incidents (reference_id, pack, request_id, kind, summary, traceback,"
    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_EVENT = (
    f"INSERT OR IGNORE INTO events ({_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

_STOP = object()


class IncidentStoreUnreadable(OSError):
    """The database cannot be read: not a SQLite file, a directory, a schema this version
    does not know, a lock held past the busy timeout. The message names the path and why."""


_WRITE_ATTEMPTS = 5


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
        f"INSERT OR IGNORE INTO events ({_EVENT_COLUMNS})"
        f" SELECT {_EVENT_COLUMNS} FROM events_schema1 ORDER BY rowid"
    )
    conn.execute("DROP TABLE events_schema1")
    logger.info("incident store: events table moved to schema %d", _SCHEMA_VERSION)


def default_incident_db() -> Path:
    """The database path used when none is given (see module docs)."""
    env = os.environ.get(ENV_INCIDENT_DB)
    if env:
        return Path(env).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "capability-packs" / "incidents.db"


def open_local_store() -> tuple[IncidentStore | None, str]:
    """The store of a ``--local`` run (``call``, ``gate``, ``mcp``): the one ``packctl
    serve`` and ``packctl incident`` use by default (:func:`default_incident_db`), so every
    reference id the run hands out resolves there. Returns the store and a line saying
    where the incidents go: when the store cannot open, they stay in memory and end with
    the process, and the line says so and how to keep them."""
    path = default_incident_db()
    try:
        return IncidentStore(path), f"incidents are kept in {path}"
    except (OSError, sqlite3.Error) as exc:
        return None, (
            f"incidents of this run are kept in memory only and end with it: cannot open "
            f"{path} ({type(exc).__name__}: {exc}); set CAPABILITY_PACKS_INCIDENT_DB=PATH "
            "to keep them"
        )


def _incident_row(incident: Incident) -> tuple[Any, ...]:
    # Incidents the runtime recorded (``Incidents.record``) were scrubbed field by field as
    # they were made (``Incident.scrubbed``); any other is scrubbed here.
    if incident.scrubbed:
        return (
            incident.reference_id,
            incident.pack,
            incident.request_id,
            incident.kind,
            incident.summary,
            incident.traceback,
            float(incident.created_at),
        )
    return (
        incident.reference_id,
        scrub(incident.pack),
        scrub(incident.request_id),
        incident.kind,
        scrub(incident.summary),
        scrub(incident.traceback),
        float(incident.created_at),
    )


def _event_row(event: ErrorEvent) -> tuple[Any, ...]:
    # Events the runtime built (``ErrorEvent.from_outcome`` / ``.rejection``) were scrubbed
    # string by string when they were made; only bodies handed in from elsewhere (e.g.
    # ``ErrorEvent.from_dict``) are scrubbed again here.
    if event.scrubbed:  # its JSON line is usually encoded already (the stream sink)
        return (
            event.event_id,
            event.epoch,
            event.event,
            event.code,
            event.pack,
            event.version,
            event.origin,
            1 if event.retryable else 0,
            event.reference_id,
            event.request_id,
            event.to_json().decode(),
        )
    body = scrub_data(event.to_dict())
    return (
        event.event_id,
        event.epoch,
        event.event,
        body["code"],
        body["pack"],
        body["version"],
        body["origin"],
        1 if event.retryable else 0,
        body["reference_id"],
        body["request_id"],
        orjson.dumps(body).decode(),
    )


class IncidentStore:
    """Incidents and error events in one SQLite file, written by a background thread.

    Use ``store.add_incident`` as an :class:`~control_plane.core.redact.Incidents` sink and
    ``store.add_event`` as an event sink. ``read_only=True`` opens an existing database for
    lookups only (the CLI): no writer thread, no pruning, nothing created.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        max_age: float | None = DEFAULT_MAX_AGE,
        max_rows: int | None = DEFAULT_MAX_ROWS,
        prune_interval: float = DEFAULT_PRUNE_INTERVAL,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        batch_size: int = 256,
        busy_timeout: float = 30.0,
        linger: float = DEFAULT_LINGER,
        read_only: bool = False,
        durable: bool = True,
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else default_incident_db()
        self.max_age = max_age
        self.max_rows = max_rows
        self.prune_interval = prune_interval
        self.read_only = read_only
        self._busy_timeout = busy_timeout
        self._batch_size = max(1, batch_size)
        self._linger = max(0.0, linger)
        # A deque, not a queue.Queue: append/popleft are atomic and take no lock, so the
        # event loop thread hands a record over without a Condition (and without contending
        # with the writer for one). The writer is woken only when it sleeps on an empty deque.
        self._pending: deque[object] = deque()
        self._queue_size = max(1, queue_size)
        self._ready = threading.Event()
        self._idle = False
        self._closed = False
        #: Set to cut the writer's linger short (flush, close).
        self._wake = threading.Event()
        self._last_prune = float("-inf")
        #: The file the writer's connection opened (device, inode): see ``_reopen``.
        self._opened: tuple[int, int] | None = None
        #: Records handed to the store but never written (queue full, write failed, closed).
        self.dropped = 0
        #: Records written (incidents + events).
        self.written = 0
        self._thread: threading.Thread | None = None
        #: Incidents written to the kernel before the caller is answered (``durable``).
        self.journal: IncidentJournal | None = None
        if read_only:
            return
        self._initialise()
        self._replay_journals()
        if durable:
            self.journal = IncidentJournal(self.path)
        self._thread = threading.Thread(
            target=self._run, name=f"incident-store:{self.path.name}", daemon=True
        )
        self._thread.start()

    def __repr__(self) -> str:
        return f"IncidentStore({str(self.path)!r})"

    # -- setup ---------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=True
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        # WAL + NORMAL: no fsync per commit (one per checkpoint); still crash-safe, only a
        # power loss may drop the last commits. FULL cost ~270 us CPU and ~4 ms per write.
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def _initialise(self) -> None:
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
                    if found > _SCHEMA_VERSION:
                        # Its tables may not be ours any more: never write into them.
                        raise sqlite3.DatabaseError(
                            f"written by a newer version (schema {found}; this version "
                            f"knows up to {_SCHEMA_VERSION})"
                        )
                    _migrate_events(conn)
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    if conn.execute("PRAGMA user_version").fetchone()[0] < _SCHEMA_VERSION:
                        conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                    conn.execute("COMMIT")
                finally:
                    conn.close()
                return
            except sqlite3.OperationalError as exc:
                # Another process may hold the lock while switching to WAL; try again.
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    # -- writing -------------------------------------------------------------------------

    @hookimpl(specname="incident_recorded")
    def add_incident(self, incident: Incident) -> None:
        """Journal ``incident`` (one ``write`` to the kernel: it survives a killed process)
        and queue it for the database (an ``Incidents`` sink); never blocks or raises."""
        journal = self.journal
        if journal is not None:
            journal.append(incident)
            if not self._enqueue(incident):
                journal.settled(1)  # still in the journal; not to hold its rotation back
        else:
            self._enqueue(incident)

    def _replay_journals(self) -> None:
        """Commit the journals of processes that died before their writer did; remove them."""
        paths = orphaned(self.path)
        if not paths:
            return
        found = [_incident_row(i) for path in paths for i in read_journal(path)]
        conn = self._connect()
        try:
            if found:
                with self._transaction(conn):
                    conn.executemany(_INSERT_INCIDENT, found)
        except sqlite3.OperationalError as exc:
            logger.warning("incident store %s: journal replay failed: %s", self.path, exc)
            return
        finally:
            conn.close()
        for path in paths:
            with contextlib.suppress(OSError):
                path.unlink()
        if found:
            logger.info(
                "incident store %s: %d journaled incident(s) recovered", self.path, len(found)
            )

    def add_event(self, event: ErrorEvent) -> None:
        """Queue ``event`` for writing (an event sink); never blocks or raises."""
        self._enqueue(event)

    def _put(self, item: object) -> None:
        self._pending.append(item)
        if self._idle:  # set by the writer *before* it looks at the deque: no lost wake-up
            self._ready.set()

    def _enqueue(self, item: Incident | ErrorEvent) -> bool:
        if self._closed or self._thread is None:
            self.dropped += 1
            return False
        if len(self._pending) < self._queue_size:
            self._put(item)
            return True
        else:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                logger.warning(
                    "incident store %s: queue full, %d record(s) dropped so far",
                    self.path,
                    self.dropped,
                )
        return False

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Wait until everything queued before this call is written; False on timeout."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return not self._pending
        marker = threading.Event()
        self._put(marker)
        self._wake.set()  # someone is waiting: the writer stops lingering
        return marker.wait(timeout)

    def close(self, timeout: float | None = 30.0) -> None:
        """Write what is queued, then stop the writer thread."""
        if self._closed:
            return
        thread = self._thread
        if thread is not None and thread.is_alive():
            self.flush(timeout)
            self._closed = True
            self._put(_STOP)
            self._wake.set()
            thread.join(timeout)
        self._closed = True
        if self.journal is not None:
            self.journal.close(remove=thread is None or not thread.is_alive())

    def __enter__(self) -> IncidentStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            conn = self._reopen(None)
            if conn is not None:
                self._prune_if_due(conn)
            stop = False
            while not stop:
                first = self._next()
                if self._linger and isinstance(first, Incident | ErrorEvent):
                    # Let the records of concurrent calls join this one's transaction.
                    # flush() and close() end the wait early.
                    self._wait_for_batch(self._linger)
                batch = [first]
                pending = self._pending
                while pending and len(batch) < self._batch_size:
                    batch.append(pending.popleft())
                incidents: list[tuple[Any, ...]] = []
                events: list[tuple[Any, ...]] = []
                markers: list[threading.Event] = []
                for item in batch:
                    if item is _STOP:
                        stop = True
                    elif isinstance(item, threading.Event):
                        markers.append(item)
                    elif isinstance(item, Incident):
                        incidents.append(_incident_row(item))
                    elif isinstance(item, ErrorEvent):
                        events.append(_event_row(item))
                if incidents or events:
                    conn, ok = self._write(conn, incidents, events)
                    # Incidents not committed stay due in the journal: `packctl incident`
                    # finds them there, and the next store to open this file commits them.
                    if ok and incidents and self.journal is not None:
                        self.journal.settled(len(incidents))
                    if conn is not None:
                        self._prune_if_due(conn)
                for marker in markers:
                    marker.set()
        # Thread boundary: log whatever killed the writer instead of dying silently.
        except Exception:
            logger.exception("incident store %s: writer thread failed", self.path)
        finally:
            if conn is not None:
                conn.close()
            self._release_waiters()

    def _identity(self) -> tuple[int, int] | None:
        """The file now at ``path`` (device, inode), ``None`` when there is none."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _reopen(self, conn: sqlite3.Connection | None) -> sqlite3.Connection | None:
        """The writer's connection to the database file that is at ``path`` now.

        ``conn`` is kept while it still names that file. When the file was removed,
        renamed or replaced (or ``conn`` is ``None`` after a failure), the store is set up
        again at ``path`` (schema created when the file is new) and connected; ``None``
        (logged) when that fails: its records then count as dropped, never the thread."""
        identity = self._identity()
        if conn is not None and identity is not None and identity == self._opened:
            return conn
        if conn is not None:
            logger.warning(
                "incident store %s: the database file was removed or replaced; reopening",
                self.path,
            )
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        try:
            self._initialise()  # idempotent: creates the file and schema when missing
            conn = self._connect()
        except (OSError, sqlite3.Error) as exc:
            logger.warning("incident store %s: cannot open the database: %s", self.path, exc)
            self._opened = None
            return None
        self._opened = self._identity()
        return conn

    def _write(
        self,
        conn: sqlite3.Connection | None,
        incidents: Sequence[tuple[Any, ...]],
        events: Sequence[tuple[Any, ...]],
    ) -> tuple[sqlite3.Connection | None, bool]:
        """Commit one batch, retrying; the connection to go on with and whether it was
        committed. Any SQLite failure (locked, full disk, corrupt file, a schema that is
        not ours) is retried on a fresh connection, then counted in :attr:`dropped`."""
        count = len(incidents) + len(events)
        for attempt in range(_WRITE_ATTEMPTS):
            conn = self._reopen(conn)
            if conn is not None:
                try:
                    with self._transaction(conn):
                        if incidents:
                            conn.executemany(_INSERT_INCIDENT, incidents)
                        if events:
                            conn.executemany(_INSERT_EVENT, events)
                except sqlite3.Error as exc:
                    logger.warning(
                        "incident store %s: write attempt %d failed: %s",
                        self.path,
                        attempt + 1,
                        exc,
                    )
                    if not isinstance(exc, sqlite3.OperationalError):
                        with contextlib.suppress(sqlite3.Error):
                            conn.close()
                        conn = None  # a corrupt or foreign file: reconnect to retry
                else:
                    self.written += count
                    return conn, True
            time.sleep(0.05 * (attempt + 1))
        self.dropped += count
        logger.error("incident store %s: %d record(s) dropped after retries", self.path, count)
        return conn, False

    def _next(self) -> object:
        """The oldest pending record; sleeps while there is none."""
        pending = self._pending
        while True:
            self._idle = True
            if pending:
                self._idle = False
                return pending.popleft()
            self._ready.wait()
            self._ready.clear()

    def _wait_for_batch(self, linger: float) -> None:
        """Wait up to ``linger`` seconds for more records, less when someone flushes or
        closes. One timed wait, not a polling loop: every wake-up costs CPU."""
        if len(self._pending) >= self._batch_size - 1:
            return  # a full batch is waiting already
        self._wake.wait(linger)
        self._wake.clear()

    def _release_waiters(self) -> None:
        while self._pending:
            item = self._pending.popleft()
            if isinstance(item, threading.Event):
                item.set()
            elif item is not _STOP:
                self.dropped += 1

    @staticmethod
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

    # -- retention -----------------------------------------------------------------------

    def _prune_if_due(self, conn: sqlite3.Connection) -> None:
        now = time.monotonic()
        if now - self._last_prune < self.prune_interval:
            return
        self._last_prune = now
        try:
            self._prune(conn, time.time())
        except sqlite3.Error as exc:
            logger.warning("incident store %s: pruning failed: %s", self.path, exc)

    def _prune(self, conn: sqlite3.Connection, now: float) -> int:
        removed = 0
        with self._transaction(conn):
            for table in ("incidents", "events"):
                if self.max_age is not None:
                    cur = conn.execute(
                        f"DELETE FROM {table} WHERE created_at < ?", (now - self.max_age,)
                    )
                    removed += cur.rowcount
                if self.max_rows is not None:
                    cur = conn.execute(
                        f"DELETE FROM {table} WHERE rowid <= (SELECT rowid FROM {table}"
                        " ORDER BY rowid DESC LIMIT 1 OFFSET ?)",
                        (self.max_rows,),
                    )
                    removed += cur.rowcount
        return removed

    def prune(self, now: float | None = None) -> int:
        """Apply retention now (from the calling thread); the number of rows deleted."""
        if self.read_only:
            raise ValueError("a read-only incident store does not prune")
        conn = self._connect()
        try:
            return self._prune(conn, time.time() if now is None else now)
        finally:
            conn.close()

    # -- reading -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection | None]:
        """A query-only connection (``None``: a read-only store whose file does not exist).
        Any SQLite failure while it is used is :class:`IncidentStoreUnreadable`."""
        if self.read_only and not self.path.exists():
            yield None
            return
        conn: sqlite3.Connection | None = None
        try:
            conn = self._connect()
            conn.execute("PRAGMA query_only = 1")
            yield conn
        except sqlite3.Error as exc:
            raise IncidentStoreUnreadable(self._unreadable(conn, exc)) from exc
        finally:
            if conn is not None:
                conn.close()

    def _unreadable(self, conn: sqlite3.Connection | None, exc: sqlite3.Error) -> str:
        """Why the database cannot be read, for an operator: path, SQLite's words, and the
        schema version when the file was written by a newer version of this product."""
        reason = f"cannot read the incident store {self.path}: {exc}"
        if os.path.isdir(self.path):
            return f"{reason} (it is a directory)"
        version = None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version is not None and version > _SCHEMA_VERSION:
            return (
                f"{reason} (written by a newer version: schema {version}, this version "
                f"knows up to {_SCHEMA_VERSION})"
            )
        return reason

    def get(self, reference_id: str) -> Incident | None:
        """The incident kept under ``reference_id``, or ``None``.

        When the database cannot be read (:class:`IncidentStoreUnreadable`), the journals
        beside it are still searched: the incidents a broken store could not commit are
        there; the error is raised only when they do not have it either."""
        ref = reference_id.strip()
        unreadable: IncidentStoreUnreadable | None = None
        row = None
        try:
            with self._reader() as conn:
                if conn is not None:
                    row = conn.execute(
                        "SELECT reference_id, pack, request_id, kind, summary, traceback,"
                        " created_at FROM incidents WHERE reference_id = ?",
                        (ref,),
                    ).fetchone()
        except IncidentStoreUnreadable as exc:
            unreadable = exc
        if row is not None:
            return Incident(*row)
        # Not committed yet (or its process was killed first): the journals have it.
        found = find(self.path, ref)
        if found is None and unreadable is not None:
            raise unreadable
        if found is None or (
            self.max_age is not None and found.created_at < time.time() - self.max_age
        ):
            return None  # retention applies to journaled incidents too
        return Incident(*_incident_row(found))

    def recent(self, limit: int = 20) -> list[Incident]:
        """The newest incidents, newest first."""
        with self._reader() as conn:
            if conn is None:
                return []
            rows = conn.execute(
                "SELECT reference_id, pack, request_id, kind, summary, traceback, created_at"
                " FROM incidents ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [Incident(*row) for row in rows]

    def events(self, *, since: float | None = None, limit: int = 100) -> list[ErrorEvent]:
        """Stored events of the last ``since`` seconds (all when None), newest first."""
        floor = time.time() - since if since is not None else float("-inf")
        with self._reader() as conn:
            if conn is None:
                return []
            rows = conn.execute(
                "SELECT body FROM events WHERE created_at >= ?"
                " ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (floor, limit),
            ).fetchall()
        return [ErrorEvent.from_dict(orjson.loads(body)) for (body,) in rows]

    def errors(self, since: float | None = None, by: GroupBy = "code") -> list[tuple[str, int]]:
        """Error counts of the last ``since`` seconds (all when None), grouped ``by``.

        Pairs ``(value, count)``, largest count first.
        """
        column = _GROUP_COLUMNS.get(by)
        if column is None:
            raise ValueError(f"cannot group errors by {by!r}; use one of code, pack, origin")
        floor = time.time() - since if since is not None else float("-inf")
        with self._reader() as conn:
            if conn is None:
                return []
            rows = conn.execute(
                f"SELECT {column}, COUNT(*) FROM events WHERE created_at >= ?"
                f" GROUP BY {column} ORDER BY COUNT(*) DESC, {column}",
                (floor,),
            ).fetchall()
        return [(str(value), int(count)) for value, count in rows]

    def counts(self) -> dict[str, int]:
        """Rows per table: ``{"incidents": n, "events": m}``."""
        with self._reader() as conn:
            if conn is None:
                return {"incidents": 0, "events": 0}
            return {
                table: int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
                for table in ("incidents", "events")
            }

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` verdict (``"ok"`` when sound)."""
        with self._reader() as conn:
            if conn is None:
                return "ok"
            return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
