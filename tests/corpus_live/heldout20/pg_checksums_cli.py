"""PostgreSQL's ``pg_checksums`` (Debian's postgresql 15, in the server's bindir) run as a
pack runs it, a command on argv, against local data directories: clusters the setup creates
with Debian's ``initdb`` (one with data checksums, one without, both cleanly shut down), one
a real PostgreSQL 15 server is running on, and copies that cases damage (a flipped byte in a
heap page, a garbled ``pg_control``, a directory private to another user). Nothing is faked.
The failure is the exit status and the ``pg_checksums: error: ...`` line the tool writes."""

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

from corpus_live.core import AUTH, EXISTS, INT, NF, family
from corpus_live.heldout2._daemons import postgres


@dataclass
class Clusters:
    tool: str
    sums: Path  # shut down, data checksums on
    plain: Path  # shut down, data checksums off
    running: Path  # a server runs on it
    work: Path


def _initdb(bindir: Path, base: Path, *extra: str) -> Path:
    base.mkdir()
    if os.geteuid() == 0:
        shutil.chown(base, "nobody", "nogroup")
    data = base / "data"
    subprocess.run(
        as_nobody(
            [
                *(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-E", "UTF8"),
                *("--locale=C", "--no-sync", *extra),
            ]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    return data


def _setup(stack: contextlib.ExitStack, work: Path) -> Clusters:
    bindir = pg_bindir()
    if bindir is None or not (bindir / "pg_checksums").exists():
        raise RuntimeError("pg_checksums is not installed (postgresql, CP_APT_DEV)")
    postgres(stack, work)  # opens work and its parent to nobody, initdb's under work/pg
    sums = _initdb(bindir, work / "sums", "--data-checksums")
    plain = _initdb(bindir, work / "plain")
    return Clusters(str(bindir / "pg_checksums"), sums, plain, work / "pg" / "data", work)


FAM = family(
    "pg_checksums",
    "the pg_checksums CLI on PostgreSQL 15 data directories (Debian), real",
    _setup,
    half="heldout20",
)


def _run(
    source: Callable[[Clusters], Path],
    *extra: str,
    damage: Callable[[Path], None] | None = None,
    copy: bool = True,
    nobody: bool = False,
) -> Callable[[Clusters], None]:
    def run(c: Clusters) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-checksums-", dir=c.work) as tmp:
            data = source(c)
            if copy:
                dst = Path(tmp) / "data"
                shutil.copytree(data, dst, symlinks=True)
                data = dst
            if damage is not None:
                damage(data)
            argv = [c.tool, *extra, "-D", str(data)]
            subprocess.run(
                as_nobody(argv) if nobody else argv,
                capture_output=True,
                check=True,
                timeout=60,
            )

    return run


def _flip(rel: str, offset: int) -> Callable[[Path], None]:
    def damage(data: Path) -> None:
        f = data / rel
        raw = bytearray(f.read_bytes())
        raw[offset] ^= 0xFF
        f.write_bytes(bytes(raw))

    return damage


def _private(data: Path) -> None:
    os.chmod(data.parent, 0o755)
    os.chmod(data, 0o700)  # root's copy; the tool runs as nobody


def _sums(c: Clusters) -> Path:
    return c.sums


def _plain(c: Clusters) -> Path:
    return c.plain


FAM.add(
    "missing_datadir",
    NF,
    "the data directory does not exist: could not open pg_control",
    _run(lambda c: c.work / "no-such-cluster", copy=False),
)
FAM.add(
    "not_a_datadir",
    NF | INT,
    "a scratch directory that holds no cluster: could not open global/pg_control",
    _run(lambda c: c.work, copy=False),
)
FAM.add(
    "cluster_running",
    INT,
    "a server is running on the data directory: cluster must be shut down",
    _run(lambda c: c.running, "--check", copy=False),
)
FAM.add(
    "checksums_not_enabled",
    INT,
    "--check on a cluster initialised without data checksums: not enabled in cluster",
    _run(_plain, "--check"),
)
FAM.add(
    "already_enabled",
    EXISTS | INT,
    "--enable on a cluster whose data checksums are on: already enabled in cluster",
    _run(_sums, "--enable", "--no-sync"),
)
FAM.add(
    "already_disabled",
    EXISTS | INT,
    "--disable on a cluster whose data checksums are off: already disabled in cluster",
    _run(_plain, "--disable", "--no-sync"),
)
FAM.add(
    "bad_checksum",
    INT,
    "a heap page of pg_authid was damaged on disk: checksum verification failed, block 0",
    _run(_sums, "--check", damage=_flip("global/1260", 5000)),
)
FAM.add(
    "control_file_garbled",
    INT,
    "pg_control was damaged on disk: pg_control CRC value is incorrect",
    _run(_sums, "--check", damage=_flip("global/pg_control", 40)),
)
FAM.add(
    "permission_denied",
    AUTH,
    "the data directory is private to another user: Permission denied",
    _run(_sums, "--check", damage=_private, nobody=True),
)
FAM.add(
    "filenode_not_numeric",
    INT,
    "the pack passes a table name where a numeric filenode belongs",
    _run(_sums, "--check", "-f", "pg_class", copy=False),
)
FAM.add(
    "filenode_without_check",
    INT,
    "the pack combines --filenode with --enable: it can only be used with --check",
    _run(_plain, "--enable", "-f", "1259"),
)
FAM.add("bad_flag", INT, "the pack passes a flag pg_checksums does not have", _run(_sums, "-Z"))
