"""PostgreSQL's ``pg_verifybackup`` (Debian's postgresql 15, in the server's bindir) run as a
pack runs it, a command on argv, against local files: a real base backup that the setup takes
with ``pg_basebackup`` from a real PostgreSQL 15 (Debian's ``postgres``) and copies of it that
each case damages the way disks and careless hands do (a file edited, grown, removed or
added, the manifest truncated or edited, the WAL gone), a directory that does not exist and
one private to another user. Nothing is faked. The failure is the exit status and the
``pg_verifybackup: error: ...`` lines the tool writes."""

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

from corpus_live.core import AUTH, INT, LOOPBACK, NF, family
from corpus_live.heldout2._daemons import PG_ADMIN_PW, postgres


@dataclass
class Backup:
    tool: str
    backup: Path  # a pristine plain-format base backup with its manifest and WAL
    work: Path


def _setup(stack: contextlib.ExitStack, work: Path) -> Backup:
    bindir = pg_bindir()
    if bindir is None or not (bindir / "pg_verifybackup").exists():
        raise RuntimeError("pg_verifybackup is not installed (postgresql, CP_APT_DEV)")
    pg = postgres(stack, work)
    backup = work / "backup"
    subprocess.run(
        [
            str(bindir / "pg_basebackup"),
            *("-h", LOOPBACK, "-p", str(pg.port), "-U", "postgres", "-w"),
            *("-D", str(backup), "-X", "fetch", "-c", "fast", "--no-sync"),
        ],
        check=True,
        capture_output=True,
        env=dict(os.environ, PGPASSWORD=PG_ADMIN_PW),
        timeout=120,
    )
    return Backup(str(bindir / "pg_verifybackup"), backup, work)


FAM = family(
    "pg_verifybackup",
    "the pg_verifybackup CLI on a base backup of PostgreSQL 15 (Debian), real",
    _setup,
    half="heldout20",
)


def _verify(
    damage: Callable[[Path], None] | None = None,
    *extra: str,
    target: Callable[[Path], Path] | None = None,
    nobody: bool = False,
) -> Callable[[Backup], None]:
    def run(c: Backup) -> None:
        with tempfile.TemporaryDirectory(prefix="corpus44-verify-", dir=c.work) as tmp:
            copy = Path(tmp) / "backup"
            shutil.copytree(c.backup, copy, symlinks=True)
            if damage is not None:
                damage(copy)
            path = target(copy) if target is not None else copy
            argv = [c.tool, *extra, str(path)]
            subprocess.run(
                as_nobody(argv) if nobody else argv,
                capture_output=True,
                check=True,
                timeout=60,
            )

    return run


def _edit(rel: str) -> Callable[[Path], None]:
    """Flip one byte of ``rel`` in place: same size, other checksum."""

    def damage(b: Path) -> None:
        f = b / rel
        data = bytearray(f.read_bytes())
        data[len(data) // 2] ^= 0xFF
        f.write_bytes(bytes(data))

    return damage


def _grow(b: Path) -> None:
    with open(b / "pg_hba.conf", "a") as f:
        f.write("host all all 10.0.0.0/8 scram-sha-256\n")


def _remove(b: Path) -> None:
    (b / "PG_VERSION").unlink()


def _add(b: Path) -> None:
    (b / "base" / "stray.tmp").write_text("left here by hand\n")


def _truncate_manifest(b: Path) -> None:
    m = b / "backup_manifest"
    m.write_bytes(m.read_bytes()[:200])


def _edit_manifest(b: Path) -> None:
    m = b / "backup_manifest"
    text = m.read_text()
    m.write_text(text.replace('"Path": "PG_VERSION", "Size": 3', '"Path": "PG_VERSION", "Size": 4'))


def _drop_wal(b: Path) -> None:
    for f in (b / "pg_wal").iterdir():
        if f.is_file():
            f.unlink()


def _private(b: Path) -> None:
    os.chmod(b.parent, 0o755)
    os.chmod(b, 0o700)  # root's; the tool runs as nobody


FAM.add(
    "missing_backup_dir",
    NF,
    "the backup directory does not exist",
    _verify(target=lambda b: b.parent / "no-such-backup"),
)
FAM.add(
    "no_manifest",
    NF | INT,
    "a directory without a backup_manifest: could not open file",
    _verify(lambda b: (b / "backup_manifest").unlink()),
)
FAM.add(
    "manifest_path_missing",
    NF,
    "-m names a manifest file that does not exist",
    _verify(None, "-m", "/nonexistent/backup_manifest"),
)
FAM.add(
    "wal_dir_missing",
    NF | INT,
    "-w names a WAL directory that does not exist: WAL parsing failed",
    _verify(None, "-w", "/nonexistent/pg_wal"),
)
FAM.add(
    "truncated_manifest",
    INT,
    "the manifest is cut short: could not parse backup manifest",
    _verify(_truncate_manifest),
)
FAM.add(
    "manifest_checksum_mismatch",
    INT,
    "the manifest was edited by hand: manifest checksum mismatch",
    _verify(_edit_manifest),
)
FAM.add(
    "file_checksum_mismatch",
    INT,
    "a data file's contents changed after the backup: checksum mismatch for file",
    _verify(_edit("global/pg_control")),
)
FAM.add(
    "file_size_mismatch",
    INT,
    "a file grew after the backup: it has size N on disk but size M in the manifest",
    _verify(_grow),
)
FAM.add(
    "file_missing",
    NF | INT,
    "a file the manifest lists was removed: present in the manifest but not on disk",
    _verify(_remove),
)
FAM.add(
    "extra_file",
    INT,
    "a file the manifest does not list was added: present on disk but not in the manifest",
    _verify(_add),
)
FAM.add(
    "wal_missing",
    NF | INT,
    "the WAL the backup needs was deleted: WAL parsing failed for timeline 1",
    _verify(_drop_wal),
)
FAM.add(
    "permission_denied",
    AUTH,
    "the backup directory is private to another user: could not open file, Permission denied",
    _verify(_private, nobody=True),
)
FAM.add(
    "not_a_directory",
    INT | NF,
    "the pack passes the manifest file itself instead of the backup directory",
    _verify(target=lambda b: b / "backup_manifest"),
)
FAM.add(
    "bad_flag", INT, "the pack passes a flag pg_verifybackup does not have", _verify(None, "-Z")
)
