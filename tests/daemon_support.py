"""Starting Debian's daemons for the live corpora (``failure_corpus``, ``corpus_live``).

Imports nothing of the control plane: ``corpus_live.probe`` prints raw failures without it.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def as_nobody(argv: list[str]) -> list[str]:
    """``argv`` run as ``nobody`` when we are root (PostgreSQL refuses to run as root)."""
    return ["runuser", "-u", "nobody", "--", *argv] if os.geteuid() == 0 else argv


def pg_bindir() -> Path | None:
    """The newest installed PostgreSQL's ``bin`` directory (Debian's ``postgresql``)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@dataclass
class PgCluster:
    bindir: Path
    data: Path
    socket_dir: Path


def pg_initdb(base: Path, password: str, *, open_dirs: tuple[Path, ...] = ()) -> PgCluster:
    """A new PostgreSQL cluster under ``base`` (created): superuser ``postgres`` with
    ``password``, SCRAM authentication, UTF-8, C locale; owned by ``nobody`` when we are root
    (``base``'s parent and ``open_dirs``, private scratch directories above it, are opened to
    it)."""
    bindir = pg_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed: run scripts/setup --dev (CP_APT_DEV)")
    base.mkdir()
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    pwfile = base / "pw"
    pwfile.write_text(password + "\n")
    if os.geteuid() == 0:
        for d in (*open_dirs, base.parent):
            os.chmod(d, 0o755)
        for path in (base, sock, pwfile):
            shutil.chown(path, "nobody", "nogroup")
    subprocess.run(
        as_nobody(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=scram-sha-256",
                f"--pwfile={pwfile}",
                "-E",
                "UTF8",
                "--locale=C",
            ]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    return PgCluster(bindir, data, sock)


def pg_wait_ready(cluster: PgCluster, host: str, port: int, timeout: float = 60.0) -> None:
    """Wait until the server accepts connections: it listens on its port before it has
    finished starting up, when a login is answered "the database system is starting up"."""
    deadline = time.monotonic() + timeout
    while True:
        ready = subprocess.run(
            [str(cluster.bindir / "pg_isready"), "-q", "-h", host, "-p", str(port), "-t", "2"],
            check=False,
            capture_output=True,
            timeout=10,
        )
        if ready.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"PostgreSQL on port {port} was not ready within {timeout}s")
        time.sleep(0.1)
