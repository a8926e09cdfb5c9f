"""The incident store's shared backend: one PostgreSQL database every replica and worker
writes to and reads from (``--incident-db postgresql://…``; docs/replicas.md).

Needs psycopg 3 (``pip install 'capability-packs[postgres]'``). The tables live in a
schema of their own (``capability_packs``), created and migrated by the product: each
step of :data:`_MIGRATIONS` runs once, under an advisory lock, so replicas starting
together do not race."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from control_plane._features.observability.incident_backend import (
    EVENT_COLUMNS,
    INCIDENT_COLUMNS,
    IncidentBackend,
    Row,
    journal_anchor,
    shown_location,
)

__all__ = ["SCHEMA", "PostgresBackend", "PostgresDriverMissing"]

logger = logging.getLogger("capability_packs.incidents")

SCHEMA = "capability_packs"

#: Each step takes the database from the version before it to its own; applied in order.
_MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            f"""CREATE TABLE {SCHEMA}.incidents (
                seq BIGSERIAL NOT NULL,
                reference_id TEXT PRIMARY KEY,
                pack TEXT NOT NULL,
                request_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                summary TEXT NOT NULL,
                traceback TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL
            )""",
            f"CREATE INDEX incidents_created_at ON {SCHEMA}.incidents (created_at)",
            f"CREATE INDEX incidents_seq ON {SCHEMA}.incidents (seq)",
            f"""CREATE TABLE {SCHEMA}.events (
                seq BIGSERIAL NOT NULL,
                event_id TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
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
            )""",
            f"CREATE INDEX events_seq ON {SCHEMA}.events (seq)",
        ),
    ),
)
PG_SCHEMA_VERSION = _MIGRATIONS[-1][0]
#: Held (per transaction) while the schema is created or migrated.
_LOCK_KEY = 0x63705F696E6364  # "cp_incd"

_INSERT_INCIDENT = (
    f"INSERT INTO {SCHEMA}.incidents ({INCIDENT_COLUMNS})"
    " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)
_INSERT_EVENT = (
    f"INSERT INTO {SCHEMA}.events ({EVENT_COLUMNS})"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)


class PostgresDriverMissing(OSError):
    """A PostgreSQL URL was given but psycopg 3 is not installed."""


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise PostgresDriverMissing(
            "a postgresql:// incident store needs psycopg 3, which is not installed: "
            "pip install 'capability-packs[postgres]'"
        ) from exc
    return psycopg


class PostgresBackend(IncidentBackend):
    """Incidents and events in one PostgreSQL database shared by every process."""

    prefix = f"{SCHEMA}."
    param = "%s"
    seq = "seq"

    def __init__(self, url: str, *, timeout: float, state_dir: Path | None = None) -> None:
        self._driver = _psycopg()
        self.errors = (self._driver.Error,)
        self._url = url
        self.location = shown_location(url)
        if state_dir is None:
            from control_plane._features.observability.incident_store import (
                state_dir as default_state_dir,
            )

            state_dir = default_state_dir()
        self.anchor = journal_anchor(url, state_dir)
        #: Seconds to connect, and for one statement: a slow server fails the attempt.
        self._timeout = max(1.0, min(timeout, 10.0))
        self._conn: Any = None

    def _connect(self) -> Any:
        return self._driver.connect(
            self._url,
            autocommit=True,
            connect_timeout=max(1, int(self._timeout)),
            options=f"-c statement_timeout={int(self._timeout * 1000)}",
            application_name="capability-packs",
        )

    def prepare(self) -> None:
        with contextlib.closing(self._connect()) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            # Created only when missing: a user without CREATE on the database may use a
            # schema an administrator made for it.
            there = conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (f"{SCHEMA}.schema_version",)
            ).fetchone()
            if not (there and there[0]):
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
                conn.execute(f"CREATE TABLE {SCHEMA}.schema_version (version INTEGER NOT NULL)")
            row = conn.execute(f"SELECT max(version) FROM {SCHEMA}.schema_version").fetchone()
            found = int(row[0]) if row and row[0] is not None else 0
            if found > PG_SCHEMA_VERSION:
                # Its tables may not be ours any more: never write into them.
                raise self._driver.DatabaseError(
                    f"written by a newer version (schema {found}; this version knows up "
                    f"to {PG_SCHEMA_VERSION})"
                )
            for version, statements in _MIGRATIONS:
                if version <= found:
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute(f"DELETE FROM {SCHEMA}.schema_version")
                conn.execute(
                    f"INSERT INTO {SCHEMA}.schema_version (version) VALUES (%s)", (version,)
                )
                logger.info("incident store %s: schema %d", self.location, version)

    def _writer(self) -> Any:
        conn = self._conn
        if conn is None or conn.closed:
            self._conn = conn = self._connect()
        return conn

    def discard(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(self._driver.Error):
                conn.close()

    def write(self, incidents: Sequence[Row], events: Sequence[Row]) -> None:
        try:
            conn = self._writer()
            with conn.transaction(), conn.cursor() as cur:
                if incidents:
                    cur.executemany(_INSERT_INCIDENT, incidents)
                if events:
                    cur.executemany(_INSERT_EVENT, events)
        except self._driver.Error:
            self.discard()  # the server may have gone: the next attempt connects afresh
            raise

    @contextlib.contextmanager
    def _changing(self) -> Iterator[Any]:
        with contextlib.closing(self._connect()) as conn, conn.transaction():
            yield conn

    # -- reading -------------------------------------------------------------------------

    def exists(self) -> bool:
        return True

    @contextlib.contextmanager
    def _reader(self) -> Iterator[Any]:
        with contextlib.closing(self._connect()) as conn:
            conn.read_only = True
            yield conn

    def _missing(self, exc: Exception) -> bool:
        """Whether ``exc`` says our tables are not there (no replica has started yet)."""
        return isinstance(
            exc, self._driver.errors.UndefinedTable | self._driver.errors.InvalidSchemaName
        )

    def _rows(self, query: str, params: Sequence[Any]) -> list[Row]:
        with self._reader() as conn:
            try:
                return [tuple(row) for row in conn.execute(query, params).fetchall()]
            except self._driver.Error as exc:
                if self._missing(exc):
                    return []
                raise

    def read_integrity(self) -> str:
        self._rows("SELECT 1", ())  # the server answers; PostgreSQL checks its own pages
        return "ok"
