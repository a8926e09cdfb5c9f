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
from typing import Any

import orjson

from control_plane._features.observability.events import ErrorEvent
from control_plane._features.observability.incident_backend import (
    GROUP_COLUMNS,
    GroupBy,
    IncidentBackend,
    Row,
    is_url,
    open_backend,
    shown_location,
)
from control_plane._features.observability.journal import (
    IncidentJournal,
    find,
    orphaned,
    read_journal,
)
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.incidents import Incident
from control_plane._kernel.redact import scrub, scrub_data

__all__ = [
    "DEFAULT_MAX_AGE",
    "DEFAULT_MAX_ROWS",
    "ENV_INCIDENT_DB",
    "GroupBy",
    "IncidentStore",
    "IncidentStoreUnreadable",
    "default_incident_db",
    "elsewhere",
    "open_local_store",
    "remember_store",
    "remembered_stores",
]

logger = logging.getLogger("capability_packs.incidents")

ENV_INCIDENT_DB = "CAPABILITY_PACKS_INCIDENT_DB"
DEFAULT_MAX_AGE = 30 * 24 * 3600.0
DEFAULT_MAX_ROWS = 100_000
DEFAULT_PRUNE_INTERVAL = 60.0
DEFAULT_QUEUE_SIZE = 10_000
#: Seconds the writer waits after the first queued record before writing the batch.
DEFAULT_LINGER = 0.05

_STOP = object()
#: The writer's wake-up to commit journaled incidents again (see ``_recommit``).
_RECOMMIT = object()
#: Seconds between those attempts while the database refuses writes.
RECOMMIT_INTERVAL = 1.0


class IncidentStoreUnreadable(OSError):
    """The database cannot be read: not a SQLite file, a directory, a schema this version
    does not know, a lock held past the busy timeout, a PostgreSQL server that does not
    answer. The message names the store and why."""


_WRITE_ATTEMPTS = 5


def state_dir() -> Path:
    """This user's state directory for capability-packs (``$XDG_STATE_HOME``)."""
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "capability-packs"


#: How many stores :func:`remember_store` keeps (the most recently started first).
_REMEMBERED = 16


def _remembered_file() -> Path:
    return state_dir() / "stores"


def remember_store(location: str) -> None:
    """Note that a server or worker of this user keeps its incidents at ``location`` (a
    path, or a URL without its password): ``packctl incident`` points at it when a
    reference id is not in the store it looked in. Never raises."""
    path = _remembered_file()
    try:
        known = [loc for loc in remembered_stores() if loc != location]
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text("".join(f"{loc}\n" for loc in [location, *known][:_REMEMBERED]))
        temporary.replace(path)
    except OSError as exc:
        logger.debug("cannot note the incident store %s in %s: %s", location, path, exc)


def remembered_stores() -> list[str]:
    """The stores servers and workers of this user were started with, newest first."""
    try:
        text = _remembered_file().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()]


def elsewhere(reference_id: str, searched: str) -> tuple[str | None, str | None]:
    """Where else ``reference_id`` may be: the remembered store (a file) that has it, or
    ``None``; and the store a server or worker of this user was last started with, when it
    is not ``searched`` (a file that is gone is no suggestion)."""
    others = [
        loc
        for loc in remembered_stores()
        if loc != searched and (is_url(loc) or os.path.isfile(loc))
    ]
    for location in others:
        if is_url(location):
            continue  # remembered without its password: it cannot be opened
        with contextlib.suppress(OSError, sqlite3.Error):
            if IncidentStore(location, read_only=True).get(reference_id) is not None:
                return location, others[0]
    return None, others[0] if others else None


def default_incident_db() -> Path | str:
    """The database path used when none is given (see module docs)."""
    env = os.environ.get(ENV_INCIDENT_DB)
    if env:
        return env if is_url(env) else Path(env).expanduser()
    return state_dir() / "incidents.db"


def open_local_store() -> tuple[IncidentStore | None, str]:
    """The store of a ``--local`` run (``call``, ``gate``, ``mcp``): the one ``packctl
    serve`` and ``packctl incident`` use by default (:func:`default_incident_db`), so every
    reference id the run hands out resolves there. Returns the store and a line saying
    where the incidents go: when the store cannot open, they stay in memory and end with
    the process, and the line says so and how to keep them."""
    path = default_incident_db()
    shown = shown_location(path)
    try:
        return IncidentStore(path), f"incidents are kept in {shown}"
    except (OSError, sqlite3.Error) as exc:
        return None, (
            f"incidents of this run are kept in memory only and end with it: cannot open "
            f"{shown} ({type(exc).__name__}: {exc}); set CAPABILITY_PACKS_INCIDENT_DB=PATH "
            "to keep them"
        )


def _incident_row(incident: Incident) -> tuple[Any, ...]:
    # Incidents the runtime recorded (``Incidents.record``) were scrubbed field by field as
    # they were made (``Incident.scrubbed``); any other is scrubbed here.
    if incident.scrubbed:
        return incident.row()
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
    """Incidents and error events at rest, written by a background thread; kept in one
    SQLite file (a path, the default) or one PostgreSQL database shared by every replica
    and worker (a ``postgresql://`` URL), through
    :mod:`~control_plane._features.observability.incident_backend`.

    Use ``store.add_incident`` as an :class:`~control_plane._kernel.redact.Incidents` sink and
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
        location = path if path is not None else default_incident_db()
        self.backend: IncidentBackend = open_backend(location, busy_timeout=busy_timeout)
        #: Where the store is, as an operator is shown it (a URL without its password).
        self.location = self.backend.location
        #: The local path journals sit beside (the SQLite file itself).
        self.path = self.backend.anchor
        self.max_age = max_age
        self.max_rows = max_rows
        self.prune_interval = prune_interval
        self.read_only = read_only
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
        #: Journaled incidents whose write was given up: committed from the journal once
        #: the database takes writes again (see ``_recommit``).
        self._uncommitted = 0
        #: Records handed to the store but never written (queue full, write failed, closed).
        self.dropped = 0
        #: Records written (incidents + events).
        self.written = 0
        self._thread: threading.Thread | None = None
        #: Incidents written to the kernel before the caller is answered (``durable``).
        self.journal: IncidentJournal | None = None
        if read_only:
            return
        try:
            self.backend.prepare()
        except (OSError, sqlite3.Error):
            raise
        except self.backend.errors as exc:  # a server that refuses or does not answer
            raise IncidentStoreUnreadable(self.backend.unreadable(exc, doing="open")) from exc
        self._replay_journals()
        if durable:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.journal = IncidentJournal(self.path)
        self._thread = threading.Thread(
            target=self._run, name=f"incident-store:{self.path.name}", daemon=True
        )
        self._thread.start()

    def __repr__(self) -> str:
        return f"IncidentStore({self.location!r})"

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
        try:
            if found:
                self.backend.write(found, ())
        except self.backend.errors as exc:
            logger.warning("incident store %s: journal replay failed: %s", self.location, exc)
            return
        finally:
            self.backend.discard()
        for path in paths:
            with contextlib.suppress(OSError):
                path.unlink()
        if found:
            logger.info(
                "incident store %s: %d journaled incident(s) recovered", self.location, len(found)
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
                    self.location,
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
            self.journal.close(
                remove=(thread is None or not thread.is_alive()) and not self._uncommitted
            )

    def __enter__(self) -> IncidentStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self) -> None:
        try:
            self._prune_if_due()
            stop = False
            while not stop:
                first = self._next()
                if first is _RECOMMIT:
                    self._recommit()
                    continue
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
                    ok = self._write(incidents, events)
                    if ok and self._uncommitted:
                        self._recommit()
                    if incidents and self.journal is not None:
                        if ok:
                            self.journal.settled(len(incidents))
                        else:
                            # Still due in the journal: `packctl incident` finds them
                            # there, and they are committed from it once the database
                            # takes writes again (or by the next store to open it).
                            self._uncommitted += len(incidents)
                    self._prune_if_due()
                for marker in markers:
                    marker.set()
        # Thread boundary: log whatever killed the writer instead of dying silently.
        except Exception:
            logger.exception("incident store %s: writer thread failed", self.location)
        finally:
            self.backend.discard()
            self._release_waiters()

    def _recommit(self) -> None:
        """Commit this process's journal again (rows there already are left alone): the
        incidents whose writes were given up while the database was down or slow."""
        journal = self.journal
        if journal is None:
            self._uncommitted = 0
            return
        rows = [_incident_row(i) for i in read_journal(journal.path)]
        if rows and not self._write(rows, (), counted=False):
            return
        logger.info(
            "incident store %s: %d incident(s) committed from the journal after the "
            "database came back",
            self.location,
            self._uncommitted,
        )
        journal.settled(self._uncommitted)
        self._uncommitted = 0

    def _write(
        self, incidents: Sequence[Row], events: Sequence[Row], *, counted: bool = True
    ) -> bool:
        """Commit one batch, retrying; whether it was committed. Any database failure
        (locked, full disk, corrupt file, a schema that is not ours, a server down or
        slow) is retried on a fresh connection, then counted in :attr:`dropped`
        (``counted``: records handed to the store, not its own second attempts)."""
        count = len(incidents) + len(events)
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                self.backend.write(incidents, events)
            except self.backend.errors as exc:
                logger.warning(
                    "incident store %s: write attempt %d failed: %s",
                    self.location,
                    attempt + 1,
                    exc,
                )
            else:
                if counted:
                    self.written += count
                return True
            if self._closed and attempt:
                break  # closing: do not hold the process on a database that is gone
            time.sleep(0.05 * (attempt + 1))
        self.dropped += count
        logger.error("incident store %s: %d record(s) dropped after retries", self.location, count)
        return False

    def _next(self) -> object:
        """The oldest pending record; sleeps while there is none (``_RECOMMIT`` after
        :data:`RECOMMIT_INTERVAL` while journaled incidents wait to be committed)."""
        pending = self._pending
        while True:
            self._idle = True
            if pending:
                self._idle = False
                return pending.popleft()
            if self._uncommitted:
                if not self._ready.wait(RECOMMIT_INTERVAL):
                    self._idle = False
                    return _RECOMMIT
            else:
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

    # -- retention -----------------------------------------------------------------------

    def _prune_if_due(self) -> None:
        now = time.monotonic()
        if now - self._last_prune < self.prune_interval:
            return
        self._last_prune = now
        failures: tuple[type[Exception], ...] = (OSError, *self.backend.errors)
        try:
            self.backend.prune(time.time(), self.max_age, self.max_rows)
        except failures as exc:
            logger.warning("incident store %s: pruning failed: %s", self.location, exc)

    def prune(self, now: float | None = None) -> int:
        """Apply retention now (from the calling thread); the number of rows deleted."""
        if self.read_only:
            raise ValueError("a read-only incident store does not prune")
        return self.backend.prune(time.time() if now is None else now, self.max_age, self.max_rows)

    # -- reading -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _reading(self) -> Iterator[bool]:
        """Whether there is anything to read (a read-only store's missing file has
        nothing). Any database failure while reading is :class:`IncidentStoreUnreadable`."""
        if self.read_only and not self.backend.exists():
            yield False
            return
        try:
            yield True
        except self.backend.errors as exc:
            raise IncidentStoreUnreadable(self.backend.unreadable(exc)) from exc

    def get(self, reference_id: str) -> Incident | None:
        """The incident kept under ``reference_id``, or ``None``.

        When the database cannot be read (:class:`IncidentStoreUnreadable`), the journals
        beside it are still searched: the incidents a broken store could not commit are
        there; the error is raised only when they do not have it either."""
        ref = reference_id.strip()
        unreadable: IncidentStoreUnreadable | None = None
        row = None
        try:
            with self._reading() as there:
                if there:
                    row = self.backend.read_incident(ref)
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
        with self._reading() as there:
            rows = self.backend.read_recent(limit) if there else []
        return [Incident(*row) for row in rows]

    def events(self, *, since: float | None = None, limit: int = 100) -> list[ErrorEvent]:
        """Stored events of the last ``since`` seconds (all when None), newest first."""
        floor = time.time() - since if since is not None else float("-inf")
        with self._reading() as there:
            bodies = self.backend.read_event_bodies(floor, limit) if there else []
        return [ErrorEvent.from_dict(orjson.loads(body)) for body in bodies]

    def errors(self, since: float | None = None, by: GroupBy = "code") -> list[tuple[str, int]]:
        """Error counts of the last ``since`` seconds (all when None), grouped ``by``.

        Pairs ``(value, count)``, largest count first.
        """
        column = GROUP_COLUMNS.get(by)
        if column is None:
            raise ValueError(f"cannot group errors by {by!r}; use one of code, pack, origin")
        floor = time.time() - since if since is not None else float("-inf")
        with self._reading() as there:
            rows = self.backend.read_error_counts(column, floor) if there else []
        return [(str(value), int(count)) for value, count in rows]

    def counts(self) -> dict[str, int]:
        """Rows per table: ``{"incidents": n, "events": m}``."""
        with self._reading() as there:
            return self.backend.read_counts() if there else {"incidents": 0, "events": 0}

    def integrity_check(self) -> str:
        """The database's own verdict on its soundness (SQLite's ``PRAGMA
        integrity_check``): ``"ok"`` when sound."""
        with self._reading() as there:
            return self.backend.read_integrity() if there else "ok"
