"""Where the incident store keeps its rows: the one small interface its writer thread and
its readers use, and the choice between its two implementations (SQLite, the embedded
default: :mod:`~control_plane._features.observability.incident_sqlite`; PostgreSQL, one store shared
by every replica and worker: :mod:`~control_plane._features.observability.incident_postgres`).

The store (:class:`~control_plane._features.observability.incident_store.IncidentStore`) owns the
bounded queue, the writer thread, the journal, retention's schedule and the counting of dropped
records; a backend only runs statements. Each of its calls raises one of
:attr:`IncidentBackend.errors` on a database failure, and nothing else."""

from __future__ import annotations

import contextlib
import hashlib
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "EVENT_COLUMNS",
    "GROUP_COLUMNS",
    "INCIDENT_COLUMNS",
    "SCHEMA_VERSION",
    "GroupBy",
    "IncidentBackend",
    "Row",
    "is_url",
    "open_backend",
    "shown_location",
]

GroupBy: TypeAlias = Literal["code", "pack", "origin"]
GROUP_COLUMNS: dict[str, str] = {"code": "code", "pack": "pack", "origin": "origin"}
Row: TypeAlias = tuple[Any, ...]

#: 2: events unique by ``(created_at, event_id)`` instead of ``event_id`` alone.
SCHEMA_VERSION = 2
INCIDENT_COLUMNS = "reference_id, pack, request_id, kind, summary, traceback, created_at"
EVENT_COLUMNS = (
    "event_id, created_at, event, code, pack, version, origin, retryable, reference_id,"
    " request_id, body"
)

_URL_SCHEMES = ("postgresql", "postgres")


def is_url(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` names a PostgreSQL server (``postgresql://…``), not a file."""
    if isinstance(location, os.PathLike):
        return False
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.lower() in _URL_SCHEMES


def shown_location(location: str | os.PathLike[str]) -> str:
    """``location`` as it may be printed and logged: a URL's password replaced by ``***``."""
    if not is_url(location):
        return str(location)
    text = str(location)
    parts = urlsplit(text)
    if parts.password is None:
        return text
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username or ''}:***@{host}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def journal_anchor(url: str, state_dir: Path) -> Path:
    """The local path a PostgreSQL store's journals sit beside (one per server and
    database, the password left out): the file itself is never created."""
    digest = hashlib.sha256(shown_location(url).encode()).hexdigest()[:16]
    return state_dir / f"postgres-{digest}"


class IncidentBackend(ABC):
    """The statements of one database kind. The writer thread alone calls :meth:`write`
    and :meth:`discard` (they share one connection the backend keeps); readers call the
    ``read_*`` methods from any thread (each opens its own). The queries both kinds share
    are written here once, in the kind's dialect: :attr:`prefix`, :attr:`param`,
    :attr:`seq`."""

    #: What a table's name is prefixed with (its schema and a dot, or nothing).
    prefix = ""
    #: How a query parameter is spelled.
    param = "?"
    #: The column that orders rows by insertion.
    seq = "rowid"

    #: What an operator is shown: the file, or the URL without its password.
    location: str
    #: The local path the store's journals sit beside (see journal.py).
    anchor: Path
    #: The driver's exceptions: the only ones a call raises on a database failure.
    errors: tuple[type[Exception], ...]

    @abstractmethod
    def prepare(self) -> None:
        """Create the schema, or migrate an older one; refuse one newer than this version's
        (``errors``, or ``OSError`` for the file's directory)."""

    @abstractmethod
    def write(self, incidents: Sequence[Row], events: Sequence[Row]) -> None:
        """Insert both in one transaction; a row there already is left as it is."""

    @abstractmethod
    def _changing(self) -> contextlib.AbstractContextManager[Any]:
        """A connection of its own, in a write transaction, closed afterwards."""

    @abstractmethod
    def _rows(self, query: str, params: Sequence[Any]) -> list[Row]:
        """The rows of one read query (on a read-only connection of its own)."""

    def prune(self, now: float, max_age: float | None, max_rows: int | None) -> int:
        """Delete rows older than ``max_age`` seconds and past the newest ``max_rows``."""
        removed, p, seq = 0, self.param, self.seq
        with self._changing() as conn:
            for table in (f"{self.prefix}incidents", f"{self.prefix}events"):
                if max_age is not None:
                    cur = conn.execute(
                        f"DELETE FROM {table} WHERE created_at < {p}", (now - max_age,)
                    )
                    removed += max(0, cur.rowcount)
                if max_rows is not None:
                    cur = conn.execute(
                        f"DELETE FROM {table} WHERE {seq} <= (SELECT {seq} FROM {table}"
                        f" ORDER BY {seq} DESC LIMIT 1 OFFSET {p})",
                        (max_rows,),
                    )
                    removed += max(0, cur.rowcount)
        return removed

    @abstractmethod
    def discard(self) -> None:
        """Forget the writer's connection (after a failure); never raises."""

    @abstractmethod
    def exists(self) -> bool:
        """Whether there may be anything to read (a missing file has nothing)."""

    def read_incident(self, reference_id: str) -> Row | None:
        rows = self._rows(
            f"SELECT {INCIDENT_COLUMNS} FROM {self.prefix}incidents"
            f" WHERE reference_id = {self.param}",
            (reference_id,),
        )
        return rows[0] if rows else None

    def read_recent(self, limit: int) -> list[Row]:
        return self._rows(
            f"SELECT {INCIDENT_COLUMNS} FROM {self.prefix}incidents"
            f" ORDER BY created_at DESC, {self.seq} DESC LIMIT {self.param}",
            (limit,),
        )

    def read_event_bodies(self, floor: float, limit: int) -> list[str]:
        rows = self._rows(
            f"SELECT body FROM {self.prefix}events WHERE created_at >= {self.param}"
            f" ORDER BY created_at DESC, {self.seq} DESC LIMIT {self.param}",
            (floor, limit),
        )
        return [str(body) for (body,) in rows]

    def read_error_counts(self, column: str, floor: float) -> list[tuple[Any, Any]]:
        rows = self._rows(
            f"SELECT {column}, COUNT(*) FROM {self.prefix}events"
            f" WHERE created_at >= {self.param} GROUP BY {column} ORDER BY COUNT(*) DESC, {column}",
            (floor,),
        )
        return [(row[0], row[1]) for row in rows]

    def read_counts(self) -> dict[str, int]:
        """Rows per table (none in a table not made yet)."""
        counts = {}
        for table in ("incidents", "events"):
            rows = self._rows(f"SELECT COUNT(*) FROM {self.prefix}{table}", ())
            counts[table] = int(rows[0][0]) if rows else 0
        return counts

    @abstractmethod
    def read_integrity(self) -> str:
        """The database's own verdict on its soundness (``"ok"``)."""

    def unreadable(self, exc: Exception, *, doing: str = "read") -> str:
        """Why reading (or opening) failed, for an operator: the location and the
        driver's words on one line (libpq's hint is a second, tab-indented one)."""
        return f"cannot {doing} the incident store {self.location}: {' '.join(str(exc).split())}"


def open_backend(location: str | os.PathLike[str], *, busy_timeout: float) -> IncidentBackend:
    """The backend of ``location``: a ``postgresql://`` URL or a SQLite file path."""
    if is_url(location):
        from control_plane._features.observability.incident_postgres import PostgresBackend

        return PostgresBackend(str(location), timeout=busy_timeout)
    from control_plane._features.observability.incident_sqlite import SqliteBackend

    return SqliteBackend(Path(location).expanduser(), busy_timeout=busy_timeout)
