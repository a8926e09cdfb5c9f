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
CREATE ROLE maker LOGIN CREATEDB PASSWORD 'maker-pw';
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


# -- etcd ---------------------------------------------------------------------------------

ETCD_ROOT = "root:root-pw"


@dataclass
class Etcd:
    port: int  # auth enabled; max request 4096 bytes; users app (rw app/), reader (ro app/)
    full_port: int  # no auth; its 1 MiB backend quota filled: the NOSPACE alarm is raised
    compacted_rev: int  # a revision of app/k older than the compaction

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"


def _etcd(stack: contextlib.ExitStack, work: Path, name: str, *extra: str) -> int:
    port, peer = free_port(), free_port()
    daemon(
        stack,
        [
            "etcd",
            "--name",
            name,
            "--data-dir",
            str(work / f"etcd-{name}"),
            "--listen-client-urls",
            f"http://{LOOPBACK}:{port}",
            "--advertise-client-urls",
            f"http://{LOOPBACK}:{port}",
            "--listen-peer-urls",
            f"http://{LOOPBACK}:{peer}",
            "--initial-advertise-peer-urls",
            f"http://{LOOPBACK}:{peer}",
            "--initial-cluster",
            f"{name}=http://{LOOPBACK}:{peer}",
            *extra,
        ],
        port,
        log=work / f"etcd-{name}.log",
    )
    return port


def _ctl(port: int, *args: str, user: str | None = None, input: bytes | None = None) -> str:
    argv = ["etcdctl", f"--endpoints=http://{LOOPBACK}:{port}", "--dial-timeout=5s"]
    if user:
        argv.append(f"--user={user}")
    out = subprocess.run(
        [*argv, *args], check=True, capture_output=True, input=input, timeout=30,
        env=dict(os.environ, ETCDCTL_API="3"),
    )
    return out.stdout.decode()


def etcd(stack: contextlib.ExitStack, work: Path) -> Etcd:
    require("etcd", "etcdctl")
    port = _etcd(stack, work, "main", "--max-request-bytes", "4096")
    for args in (
        ("user", "add", ETCD_ROOT),
        ("role", "add", "rw"),
        ("role", "grant-permission", "rw", "readwrite", "app/", "--prefix=true"),
        ("role", "add", "ro"),
        ("role", "grant-permission", "ro", "read", "app/", "--prefix=true"),
        ("user", "add", "app:app-pw"),
        ("user", "grant-role", "app", "rw"),
        ("user", "add", "reader:reader-pw"),
        ("user", "grant-role", "reader", "ro"),
        ("put", "app/k", "v1"),
    ):
        _ctl(port, *args)
    first = int(_ctl(port, "get", "app/k", "-w", "fields").split('"Revision" : ')[1].split()[0])
    _ctl(port, "put", "app/k", "v2")
    _ctl(port, "put", "app/k", "v3")
    _ctl(port, "compaction", str(first + 2))
    _ctl(port, "auth", "enable")
    full = _etcd(stack, work, "full", "--quota-backend-bytes", str(1 << 20))
    blob = os.urandom(600_000)
    for i in range(4):
        try:
            _ctl(full, "put", f"fill/{i}", input=blob.hex().encode()[:600_000])
        except subprocess.CalledProcessError:
            break  # the alarm is raised: the quota is full
    return Etcd(port, full, first)
