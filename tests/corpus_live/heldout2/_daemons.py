"""Real servers of the second held-out half, started on 127.0.0.1 in a scratch directory and
stopped by the stack: PostgreSQL (Debian's ``postgresql``), beanstalkd, etcd."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from corpus_live.core import LOOPBACK, daemon, free_port, require

# -- PostgreSQL ---------------------------------------------------------------------------

PG_ADMIN_PW = "pg-admin-pw"

_PG_SETUP = """
CREATE ROLE app LOGIN PASSWORD 'app-pw';
CREATE ROLE single LOGIN PASSWORD 'single-pw' CONNECTION LIMIT 0;
CREATE ROLE sleeper NOLOGIN PASSWORD 'sleeper-pw';
CREATE DATABASE app OWNER app;
"""

_PG_APP = """
CREATE TABLE t (id int PRIMARY KEY, name varchar(4) NOT NULL);
INSERT INTO t VALUES (1, 'one'), (2, 'two');
ALTER TABLE t OWNER TO app;
CREATE TABLE secret (x int);
REVOKE ALL ON secret FROM PUBLIC;
"""


def _as_nobody(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as ``nobody`` when we are root."""
    return ["runuser", "-u", "nobody", "--", *argv] if os.geteuid() == 0 else argv


@dataclass
class Postgres:
    port: int


def postgres(stack: contextlib.ExitStack, work: Path) -> Postgres:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed (scripts/setup, CP_APT_DEV)")
    bindir = Path(found[-1]).parent
    base = work / "pg"
    base.mkdir()
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    pwfile = base / "pw"
    pwfile.write_text(PG_ADMIN_PW + "\n")
    if os.geteuid() == 0:
        for p in (work.parent, work):
            os.chmod(p, 0o755)
        for p in (base, sock, pwfile):
            shutil.chown(p, "nobody", "nogroup")
    subprocess.run(
        _as_nobody(
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
    port = free_port()
    daemon(
        stack,
        _as_nobody(
            [
                str(bindir / "postgres"),
                "-D",
                str(data),
                "-p",
                str(port),
                "-k",
                str(sock),
                "-c",
                f"listen_addresses={LOOPBACK}",
                "-c",
                "max_connections=30",
                "-c",
                "deadlock_timeout=200ms",
            ]
        ),
        port,
        log=work / "postgres.log",
        timeout=60,
    )
    env = dict(os.environ, PGPASSWORD=PG_ADMIN_PW)
    for db, sql in (("postgres", _PG_SETUP), ("app", _PG_APP)):
        subprocess.run(
            ["psql", "-h", LOOPBACK, "-p", str(port), "-U", "postgres", "-d", db, "-v",
             "ON_ERROR_STOP=1", "-q", "-f", "-"],
            input=sql.encode(),
            check=True,
            capture_output=True,
            env=env,
            timeout=60,
        )
    return Postgres(port)


# -- beanstalkd ---------------------------------------------------------------------------


@dataclass
class Beanstalkd:
    port: int  # max job size 1024 bytes
    draining_port: int  # a second server put in drain mode (SIGUSR1)


def beanstalkd(stack: contextlib.ExitStack, work: Path) -> Beanstalkd:
    require("beanstalkd")
    port, drain = free_port(), free_port()
    daemon(stack, ["beanstalkd", "-l", LOOPBACK, "-p", str(port), "-z", "1024"], port,
           log=work / "beanstalkd.log")
    proc = daemon(stack, ["beanstalkd", "-l", LOOPBACK, "-p", str(drain)], drain,
                  log=work / "beanstalkd-drain.log")
    proc.send_signal(10)  # SIGUSR1: enter drain mode (refuse new jobs)
    return Beanstalkd(port, drain)
