"""Real servers of the second held-out half, started on 127.0.0.1 in a scratch directory and
stopped by the stack: PostgreSQL (Debian's ``postgresql``), beanstalkd, etcd."""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from daemon_support import as_nobody, pg_initdb, pg_wait_ready

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


@dataclass
class Postgres:
    port: int


def postgres(stack: contextlib.ExitStack, work: Path) -> Postgres:
    pg = pg_initdb(work / "pg", PG_ADMIN_PW, open_dirs=(work.parent,))
    port = free_port()
    daemon(
        stack,
        as_nobody(
            [
                str(pg.bindir / "postgres"),
                "-D",
                str(pg.data),
                "-p",
                str(port),
                "-k",
                str(pg.socket_dir),
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
    pg_wait_ready(pg, LOOPBACK, port)
    env = dict(os.environ, PGPASSWORD=PG_ADMIN_PW)
    for db, sql in (("postgres", _PG_SETUP), ("app", _PG_APP)):
        subprocess.run(
            [
                "psql",
                "-h",
                LOOPBACK,
                "-p",
                str(port),
                "-U",
                "postgres",
                "-d",
                db,
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-f",
                "-",
            ],
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
    daemon(
        stack,
        ["beanstalkd", "-l", LOOPBACK, "-p", str(port), "-z", "1024"],
        port,
        log=work / "beanstalkd.log",
    )
    proc = daemon(
        stack,
        ["beanstalkd", "-l", LOOPBACK, "-p", str(drain)],
        drain,
        log=work / "beanstalkd-drain.log",
    )
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
        [*argv, *args],
        check=True,
        capture_output=True,
        input=input,
        timeout=30,
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


# -- RabbitMQ -----------------------------------------------------------------------------


def _rabbit_hash(password: str) -> str:
    """RabbitMQ's rabbit_password_hashing_sha256: base64(salt + sha256(salt + password))."""
    import base64
    import hashlib

    salt = os.urandom(4)
    return base64.b64encode(salt + hashlib.sha256(salt + password.encode()).digest()).decode()


@dataclass
class Rabbit:
    port: int  # users app (all on /), reader (read only on /), none on vhost "locked"


def rabbitmq(stack: contextlib.ExitStack, work: Path) -> Rabbit:
    bin_dir = Path("/usr/lib/rabbitmq/bin")
    if not (bin_dir / "rabbitmq-server").exists():
        raise RuntimeError("rabbitmq-server is not installed (scripts/setup, CP_APT_DEV)")
    import json

    port, dist = free_port(), free_port()
    defs = {
        "users": [
            {
                "name": name,
                "password_hash": _rabbit_hash(f"{name}-pw"),
                "hashing_algorithm": "rabbit_password_hashing_sha256",
                "tags": [],
            }
            for name in ("app", "reader")
        ],
        "vhosts": [{"name": "/"}, {"name": "locked"}],
        "permissions": [
            {"user": "app", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"},
            {"user": "reader", "vhost": "/", "configure": "^$", "write": "^$", "read": ".*"},
        ],
        "queues": [
            {
                "name": "jobs",
                "vhost": "/",
                "durable": True,
                "auto_delete": False,
                "arguments": {"x-max-length": 10},
            }
        ],
        "exchanges": [],
        "bindings": [],
    }
    (work / "defs.json").write_text(json.dumps(defs))
    (work / "rabbitmq.conf").write_text(
        f"listeners.tcp.default = {LOOPBACK}:{port}\n"
        f"load_definitions = {work / 'defs.json'}\n"
        "loopback_users = none\n"
        "max_message_size = 4096\n"
        "log.console = true\n"
        "log.file = false\n"
    )
    (work / "enabled_plugins").write_text("[].\n")
    home = work / "home"
    home.mkdir()
    env = rabbit_env(stack, work, port, dist)
    daemon(
        stack,
        [str(bin_dir / "rabbitmq-server")],
        port,
        log=work / "rabbitmq.log",
        env=env,
        timeout=90,
    )
    return Rabbit(port)


# -- a POP3 server answering Dovecot's replies (RFC 2449/3206 response codes) -----------------

#: PASS replies by user (any other user: app / app-pw is the only valid login)
POP3_LOGIN = {
    "busy": "-ERR [IN-USE] Mailbox is locked by another POP3 session.",
    "slow": "-ERR [LOGIN-DELAY] Minimum time between logins not elapsed.",
    "disabled": "-ERR [SYS/PERM] Your account has been disabled.",
}


@dataclass
class Pop3:
    port: int
    home: Path  # a scratch directory for the client (its rc file, pid file)


def pop3(stack: contextlib.ExitStack, work: Path) -> Pop3:
    import socketserver

    class Handler(socketserver.StreamRequestHandler):
        def say(self, line: str) -> None:
            self.wfile.write(line.encode() + b"\r\n")

        def handle(self) -> None:
            self.say("+OK Dovecot (Debian) ready.")
            user = ""
            logged_in = False
            while True:
                raw = self.rfile.readline(4096)
                if not raw:
                    return
                verb, _, arg = raw.decode(errors="replace").strip().partition(" ")
                verb = verb.upper()
                if verb == "CAPA":
                    self.say(
                        "+OK\r\nCAPA\r\nTOP\r\nUIDL\r\nRESP-CODES\r\nPIPELINING\r\n"
                        "AUTH-RESP-CODE\r\nUSER\r\n."
                    )
                elif verb == "USER":
                    user = arg
                    self.say("+OK")
                elif verb == "PASS":
                    if user in POP3_LOGIN:
                        self.say(POP3_LOGIN[user])
                    elif (user, arg) in {("app", "app-pw"), ("brokenstat", "brokenstat-pw")}:
                        logged_in = True
                        self.say("+OK Logged in.")
                    else:
                        self.say("-ERR [AUTH] Authentication failed.")
                elif verb == "STAT" and logged_in:
                    if user == "brokenstat":
                        self.say(
                            "-ERR [SYS/TEMP] Internal error occurred. Refer to server log "
                            "for more information."
                        )
                    else:
                        self.say("+OK 2 320")
                elif verb == "QUIT":
                    self.say("+OK Logging out.")
                    return
                elif not logged_in:
                    self.say("-ERR Unknown command.")
                else:
                    self.say("-ERR Unknown command: " + verb)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server((LOOPBACK, 0), Handler)
    import threading

    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
    ).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    stack.callback(stop)
    home = work / "client"
    home.mkdir()
    return Pop3(int(server.server_address[1]), home)


def rabbit_env(stack: contextlib.ExitStack, work: Path, port: int, dist: int) -> dict[str, str]:
    """The environment of a RabbitMQ node kept in ``work`` (its config ``work/rabbitmq.conf``
    and ``work/enabled_plugins``, its home ``work/home``), listening on ``port``; epmd, when
    no other node started it, is stopped when the stack closes (it outlives the node)."""
    if subprocess.run(["epmd", "-names"], capture_output=True, check=False).returncode != 0:
        stack.callback(lambda: subprocess.run(["epmd", "-kill"], capture_output=True, check=False))
    return {
        "HOME": str(work / "home"),
        "RABBITMQ_NODENAME": f"corpus44-{port}@localhost",
        "RABBITMQ_NODE_IP_ADDRESS": LOOPBACK,
        "RABBITMQ_NODE_PORT": str(port),
        "RABBITMQ_DIST_PORT": str(dist),
        "RABBITMQ_CONFIG_FILE": str(work / "rabbitmq"),
        "RABBITMQ_ENABLED_PLUGINS_FILE": str(work / "enabled_plugins"),
        "RABBITMQ_MNESIA_BASE": str(work / "mnesia"),
        "RABBITMQ_LOG_BASE": str(work / "log"),
        "RABBITMQ_PID_FILE": str(work / "rabbit.pid"),
        "ERL_EPMD_ADDRESS": LOOPBACK,
    }
