"""PostgreSQL's ``pg_waldump`` (Debian's postgresql 15, in the server's bindir) run as a pack
runs it, a command on argv with ``--quiet``, against local files: the write-ahead log of a
real cluster the setup creates with Debian's ``initdb``, and copies of its first segment
that cases damage (garbled header, cut short, private to another user); missing segments,
directories and timelines; positions and filters the tool rejects. Nothing is faked. The
failure is the exit status and the ``pg_waldump: error: ...`` line the tool writes."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from daemon_support import as_nobody, pg_bindir

from corpus_live.core import AUTH, INT, NF, family

SEGMENT = "000000010000000000000001"


@dataclass
class Wal:
    tool: str
    wal: Path  # a cluster's pg_wal, its first segment in it
    work: Path


def _setup(stack: contextlib.ExitStack, work: Path) -> Wal:
    bindir = pg_bindir()
    if bindir is None or not (bindir / "pg_waldump").exists():
        raise RuntimeError("pg_waldump is not installed (postgresql, CP_APT_DEV)")
    if os.geteuid() == 0:
        os.chmod(work.parent, 0o755)
        os.chmod(work, 0o755)
    base = work / "cluster"
    base.mkdir()
    if os.geteuid() == 0:
        shutil.chown(base, "nobody", "nogroup")
    data = base / "data"
    subprocess.run(
        as_nobody(
            [
                *(str(bindir / "initdb"), "-D", str(data), "-U", "postgres"),
                *("-E", "UTF8", "--locale=C", "--no-sync"),
            ]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    wal = work / "wal"
    shutil.copytree(data / "pg_wal", wal)
    if not (wal / SEGMENT).exists():
        raise RuntimeError(f"initdb left no {SEGMENT}: {sorted(os.listdir(wal))}")
    return Wal(str(bindir / "pg_waldump"), wal, work)


FAM = family(
    "pg_waldump",
    "the pg_waldump CLI on a PostgreSQL 15 cluster's WAL (Debian), real",
    _setup,
    half="heldout20",
)


def _dump(
    *args: str,
    damage: Callable[[Path], None] | None = None,
    nobody: bool = False,
) -> Callable[[Wal], None]:
    """``pg_waldump --quiet ARGS``; ``{wal}`` in ARGS is the WAL directory (a damaged copy
    when ``damage`` is given), ``{seg}`` its first segment."""

    def run(c: Wal) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-waldump-", dir=c.work) as tmp:
            wal = c.wal
            if damage is not None:
                wal = Path(tmp) / "pg_wal"
                wal.mkdir()
                shutil.copy(c.wal / SEGMENT, wal / SEGMENT)
                damage(wal)
            argv = [
                c.tool,
                "--quiet",
                *(a.format(wal=wal, seg=wal / SEGMENT) for a in args),
            ]
            subprocess.run(
                as_nobody(argv) if nobody else argv,
                capture_output=True,
                check=True,
                timeout=60,
            )

    return run


def _garble(wal: Path) -> None:
    seg = wal / SEGMENT
    raw = bytearray(seg.read_bytes())
    raw[0:16] = b"\xde\xad\xbe\xef" * 4
    seg.write_bytes(bytes(raw))


def _cut(wal: Path) -> None:
    seg = wal / SEGMENT
    seg.write_bytes(seg.read_bytes()[:100])


def _private(wal: Path) -> None:
    os.chmod(wal.parent, 0o755)
    os.chmod(wal, 0o755)
    os.chmod(wal / SEGMENT, 0o600)  # root's copy; the tool runs as nobody


FAM.add(
    "missing_segment",
    NF,
    "a segment file that is not in the WAL directory: could not locate WAL file",
    _dump("-p", "{wal}", "000000010000000000000009"),
)
FAM.add(
    "missing_directory",
    NF,
    "-p names a WAL directory that does not exist",
    _dump("-p", "/nonexistent/pg_wal", SEGMENT),
)
FAM.add(
    "timeline_missing",
    NF,
    "-t 7: no segment of that timeline exists: could not find any WAL file",
    _dump("-p", "{wal}", "-t", "7", "-s", "0/1000028"),
)
FAM.add(
    "start_beyond_wal",
    NF | INT,
    "a start position in a segment the directory does not hold: could not find file",
    _dump("-p", "{wal}", "-s", "0/9000028"),
)
FAM.add(
    "garbled_header",
    INT,
    "the segment's long page header was overwritten: could not find a valid record",
    _dump("{seg}", damage=_garble),
)
FAM.add(
    "truncated_segment",
    INT,
    "the segment was cut to 100 bytes: could not read file",
    _dump("{seg}", damage=_cut),
)
FAM.add(
    "permission_denied",
    AUTH,
    "the segment is private to another user: could not open file, Permission denied",
    _dump("{seg}", damage=_private, nobody=True),
)
FAM.add(
    "invalid_start",
    INT,
    "the pack passes a start position that is not an LSN",
    _dump("-p", "{wal}", "-s", "yesterday"),
)
FAM.add(
    "end_before_start",
    INT,
    "the end position precedes the start position: could not find a valid record after it",
    _dump("-p", "{wal}", "-s", "0/1000100", "-e", "0/1000028"),
)
FAM.add(
    "unknown_rmgr",
    INT,
    "the pack filters on a resource manager that does not exist",
    _dump("-p", "{wal}", "--rmgr=Nope", SEGMENT),
)
FAM.add(
    "invalid_xid",
    INT,
    "the pack passes a transaction id that is not a number",
    _dump("-p", "{wal}", "-x", "abc", SEGMENT),
)
FAM.add(
    "invalid_relation",
    INT,
    "the pack passes a relation that is not tablespace/database/relfilenode",
    _dump("-p", "{wal}", "-R", "pg_class", SEGMENT),
)
FAM.add("bad_flag", INT, "the pack passes a flag pg_waldump does not have", _dump("-Z", SEGMENT))
