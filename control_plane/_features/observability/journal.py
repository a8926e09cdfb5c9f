"""The incident journal: a reference id handed to a caller resolves even after ``kill -9``."""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson

from control_plane._kernel.incidents import Incident

__all__ = [
    "ROTATE_BYTES",
    "IncidentJournal",
    "find",
    "journal_paths",
    "orphaned",
    "read_journal",
]

logger = logging.getLogger("capability_packs.incidents")

#: A fully committed journal larger than this is truncated.
ROTATE_BYTES = 1024 * 1024
_SUFFIX = ".jsonl"


def _infix(db: Path) -> str:
    return f"{db.name}.pending-"


def journal_paths(db: Path) -> list[Path]:
    """Every journal file beside the database ``db``."""
    try:
        names = os.listdir(db.parent)
    except OSError:
        return []
    infix = _infix(db)
    return sorted(db.parent / n for n in names if n.startswith(infix) and n.endswith(_SUFFIX))


def journal_pid(path: Path) -> int | None:
    """The process id a journal file belongs to."""
    middle = path.name.rsplit(".pending-", 1)[-1].removesuffix(_SUFFIX).split("-")[0]
    return int(middle) if middle.isdigit() else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_journal(path: Path) -> Iterator[Incident]:
    """The incidents in one journal (a torn last line is skipped)."""
    try:
        data = path.read_bytes()
    except OSError:
        return
    for line in data.splitlines():
        try:
            fields = orjson.loads(line)
            yield Incident(
                reference_id=str(fields[0]),
                pack=str(fields[1]),
                request_id=str(fields[2]),
                kind=str(fields[3]),
                summary=str(fields[4]),
                traceback=str(fields[5]),
                created_at=float(fields[6]),
            )
        except (orjson.JSONDecodeError, IndexError, TypeError, ValueError):
            continue


#: Names tried before giving up on creating a journal (each taken one is skipped).
_MAX_TRIES = 64
#: A new file, never an existing one, never through a symbolic link: a journal planted
#: beside the database (a symlink to a file the server may write) is refused, not followed.
_CREATE = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _create(db: Path, counter: Iterator[int]) -> tuple[Path, int]:
    """A journal file of this process created afresh: its path and descriptor.

    The name is the pid first (orphan detection), then a per-process counter (several
    stores of one process may share a database). A name that exists already -- a planted
    symlink, or a file left by an earlier process of the same pid -- is never opened: it
    is logged and the next counter value is tried.
    """
    for _ in range(_MAX_TRIES):
        path = db.parent / f"{_infix(db)}{os.getpid()}-{next(counter)}{_SUFFIX}"
        try:
            return path, os.open(path, _CREATE, 0o600)
        except FileExistsError:
            kind = "a symbolic link" if path.is_symlink() else "a file"
            logger.warning("incident journal %s: %s is there already; not opened", path, kind)
    raise FileExistsError(f"incident journal: {_MAX_TRIES} journal names beside {db} are taken")


class IncidentJournal:
    """This process's journal file, beside the database."""

    _instances = itertools.count()

    def __init__(self, db: Path) -> None:
        # pid first (orphan detection), then a per-process counter: several stores of one
        # process may share a database.
        self.path, self._fd = _create(db, self._instances)
        self._lock = threading.Lock()
        self._appended = 0
        self._settled = 0
        self._size = os.fstat(self._fd).st_size
        self._closed = False

    def append(self, incident: Incident) -> None:
        """Write ``incident`` to the kernel (one ``write``); never raises."""
        line = orjson.dumps(incident.row())
        with self._lock:
            if self._closed:
                return
            try:
                os.write(self._fd, line + b"\n")
            except OSError as exc:  # a full disk: the store's queue still has it
                logger.warning("incident journal %s: write failed: %s", self.path, exc)
                return
            self._appended += 1
            self._size += len(line) + 1

    def settled(self, count: int) -> None:
        """``count`` journaled incidents were committed to the database (or given up)."""
        with self._lock:
            self._settled += count
            if self._size > ROTATE_BYTES and self._settled >= self._appended and not self._closed:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, 0)
                    self._size = 0

    def close(self, *, remove: bool) -> None:
        """Close the file; ``remove`` it when everything in it is committed."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError):
                os.close(self._fd)
            if remove and self._settled >= self._appended:
                with contextlib.suppress(OSError):
                    self.path.unlink()


def orphaned(db: Path) -> list[Path]:
    """Journals beside ``db`` whose process is gone."""
    me = os.getpid()
    return [
        path
        for path in journal_paths(db)
        if (pid := journal_pid(path)) is None or (pid != me and not alive(pid))
    ]


def find(db: Path, reference_id: str) -> Incident | None:
    """The incident ``reference_id`` in any journal beside ``db``."""
    for path in journal_paths(db):
        for incident in read_journal(path):
            if incident.reference_id == reference_id:
                return incident
    return None
