"""Loopback servers for the SDK corpus (``tests/test_sdk_corpus.py``), started by :func:`start`.

* a fake HTTP API: the first path segment names a reply (:data:`REPLIES`): status,
  headers, body -- what OpenAI, Anthropic, S3, DynamoDB, Google APIs, a package registry or
  a Docker daemon answer when they fail; ``bucket``-style paths work for S3 path addressing;
* raw TCP misbehaviour (silent, closing, garbage) from the old corpus' :class:`Listener`;
* a temporary PostgreSQL (``initdb``/``pg_ctl`` of ``/usr/lib/postgresql/*/bin``, run as
  ``nobody`` through ``runuser`` when the tests run as root, which PostgreSQL refuses);
* a temporary Redis (``redis-server`` on a free loopback port, ACL users);
* a local ``sshd`` (as root: it needs its privilege separation; otherwise the ssh cases
  run against the silent and closing listeners and a closed port only);
* fake RESP (Redis) and MongoDB wire servers answering one error to everything.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from daemon_support import as_nobody, pg_initdb
from pack_servers import LOOPBACK, UNRESOLVABLE_HOST, free_port

from failure_corpus.servers import Listener, _behave

__all__ = ["LOOPBACK", "REPLIES", "UNRESOLVABLE_HOST", "SdkEndpoints", "reply", "start"]

#: A date far in the future for HTTP-date ``Retry-After`` values is not stable; the corpus
#: uses delta-seconds and milliseconds, which are exact.


@dataclass(frozen=True)
class Reply:
    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    content_type: str = "application/json"


#: Reply name -> reply; cases register theirs with :func:`reply`.
REPLIES: dict[str, Reply] = {}


def reply(
    name: str,
    status: int,
    body: Any = None,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> str:
    """Register a reply under ``name`` (the first path segment that asks for it)."""
    if isinstance(body, dict | list):
        raw = json.dumps(body).encode()
    elif isinstance(body, str):
        raw = body.encode()
    else:
        raw = body or b""
    REPLIES[name] = Reply(status, tuple((headers or {}).items()), raw, content_type)
    return name


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        parts = [p for p in self.path.split("?")[0].split("/") if p]
        # /_ping (docker), /v1.41/... : the reply is named by the first segment known
        found = next((REPLIES[p] for p in parts if p in REPLIES), None)
        if parts and parts[-1] == "_ping" and found is None:
            found = Reply(200, (("Api-Version", "1.41"),), b"OK", "text/plain")
        if found is None:
            found = Reply(200, (), b"{}")
        self.send_response(found.status)
        self.send_header("Content-Type", found.content_type)
        for name, value in found.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(found.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(found.body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _answer


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True


def _resp_error(line: bytes) -> Any:
    """A RESP server answering ``line`` (``-LOADING ...``) to every command."""

    def serve(conn: socket.socket) -> None:
        conn.settimeout(5)
        with contextlib.suppress(OSError):
            while conn.recv(65536):
                conn.sendall(line + b"\r\n")
        conn.close()

    return serve


def _mongo_error(doc: dict[str, Any]) -> Any:
    """A MongoDB wire server: a valid ``hello``, then ``doc`` for every other command."""
    import bson

    hello = {
        "ok": 1.0,
        "isWritablePrimary": True,
        "ismaster": True,
        "maxWireVersion": 21,
        "minWireVersion": 0,
        "maxBsonObjectSize": 16 * 1024 * 1024,
        "maxMessageSizeBytes": 48000000,
        "maxWriteBatchSize": 100000,
        "connectionId": 1,
    }

    def recv_exact(conn: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise ConnectionError
            data += chunk
        return data

    def serve(conn: socket.socket) -> None:
        conn.settimeout(10)
        request_id = 1
        with contextlib.suppress(OSError, ConnectionError):
            while True:
                header = recv_exact(conn, 16)
                length, rid, _, opcode = struct.unpack("<iiii", header)
                body = recv_exact(conn, length - 16)
                if opcode == 2004:  # OP_QUERY (legacy hello)
                    command = bson.decode(body[4 + body.index(b"\0", 4) + 1 + 8 :][: len(body)])
                    payload = bson.encode(hello)
                    reply = struct.pack("<iqii", 0, 0, 0, 1) + payload
                    op = 1
                else:  # OP_MSG
                    size = struct.unpack("<i", body[5:9])[0]  # the kind-0 section first
                    command = bson.decode(body[5 : 5 + size])
                    name = next(iter(command), "").lower()
                    answer = hello if name in {"hello", "ismaster"} else doc
                    reply = struct.pack("<IB", 0, 0) + bson.encode(answer)
                    op = 2013
                request_id += 1
                conn.sendall(struct.pack("<iiii", 16 + len(reply), request_id, rid, op) + reply)
        conn.close()

    return serve


# -- PostgreSQL ------------------------------------------------------------------------


PG_PASSWORD = "corpus-pw-PLANTED"


@dataclass
class Postgres:
    port: int
    socket_dir: str
    data: str
    bindir: Path

    def dsn(self, **kw: Any) -> str:
        parts = {
            "host": LOOPBACK,
            "port": self.port,
            "user": "postgres",
            "password": PG_PASSWORD,
            "dbname": "postgres",
            "connect_timeout": 3,
        }
        parts.update(kw)
        return " ".join(f"{k}={v}" for k, v in parts.items() if v is not None)

    def url(self, user: str = "postgres", password: str = PG_PASSWORD, db: str = "postgres") -> str:
        return f"postgresql+psycopg://{user}:{password}@{LOOPBACK}:{self.port}/{db}"

    def stop(self) -> None:
        subprocess.run(
            as_nobody([str(self.bindir / "pg_ctl"), "-D", self.data, "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=30,
            check=False,
        )


@contextlib.contextmanager
def postgres(root: Path) -> Iterator[Postgres]:
    cluster = pg_initdb(root / "pg", PG_PASSWORD)
    bindir, data, sock = cluster.bindir, cluster.data, cluster.socket_dir
    port = free_port()
    options = f"-p {port} -k {sock} -c listen_addresses={LOOPBACK} -c max_connections=20"
    log = root / "pg" / "log"
    subprocess.run(
        as_nobody(
            [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "start"]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    pg = Postgres(port, str(sock), str(data), bindir)
    try:
        yield pg
    finally:
        pg.stop()


# -- Redis ------------------------------------------------------------------------------


REDIS_PASSWORD = "redis-pw-PLANTED"


@contextlib.contextmanager
def redis_server(root: Path) -> Iterator[int]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed: run scripts/setup --dev")
    port = free_port()
    acl = root / "users.acl"
    acl.write_text(
        f"user default on >{REDIS_PASSWORD} ~* &* +@all\n"
        "user reader on >reader-pw ~* &* -@all +get +ping +hello +auth\n"
    )
    argv = [binary, "--port", str(port), "--bind", LOOPBACK, "--save", ""]
    proc = subprocess.Popen(
        [*argv, "--aclfile", str(acl), "--dir", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), 0.5):
                break
            time.sleep(0.05)
        yield port
    finally:
        proc.kill()
        proc.wait(10)


# -- sshd -------------------------------------------------------------------------------


@contextlib.contextmanager
def sshd(root: Path) -> Iterator[int | None]:
    """A local sshd on a free port (``None`` when it cannot run here: not root)."""
    binary = shutil.which("sshd") or (
        "/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None
    )
    if binary is None or os.geteuid() != 0:
        yield None
        return
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    base = root / "ssh"
    base.mkdir()
    key = base / "host_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=30
    )
    (base / "authorized_keys").write_text("")
    config = base / "sshd_config"
    config.write_text(
        f"HostKey {key}\nListenAddress {LOOPBACK}\nPasswordAuthentication yes\n"
        f"KbdInteractiveAuthentication no\nUsePAM no\nPidFile none\nStrictModes no\n"
        f"AuthorizedKeysFile {base / 'authorized_keys'}\nPermitRootLogin yes\n"
        "MaxAuthTries 3\nLoginGraceTime 20\n"
    )
    port = free_port()
    proc = subprocess.Popen(
        [binary, "-D", "-e", "-f", str(config), "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), 0.5):
                break
            time.sleep(0.05)
        yield port
    finally:
        proc.kill()
        proc.wait(10)


# -- all of them ---------------------------------------------------------------------------


@dataclass
class SdkEndpoints:
    http: int
    closed: int
    silent: int
    close_now: int
    garbage: int
    truncated: int
    pg: Postgres
    redis: int
    sshd: int | None
    tmp: Path
    resp: dict[str, int] = field(default_factory=dict)
    mongo: dict[str, int] = field(default_factory=dict)

    def url(self, name: str, rest: str = "") -> str:
        return f"http://{LOOPBACK}:{self.http}/{name}{rest}"


#: Errors the fake RESP server answers (a Redis busy, loading, failing over).
RESP_ERRORS = {
    "loading": b"-LOADING Redis is loading the dataset in memory",
    "busy": b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN",
    "masterdown": b"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is 'no'.",
    "tryagain": b"-TRYAGAIN Multiple keys request during rehashing of slot",
    "clusterdown": b"-CLUSTERDOWN The cluster is down",
    "noauth": b"-NOAUTH Authentication required.",
    "wrongpass": b"-WRONGPASS invalid username-password pair or user is disabled.",
    "maxclients": b"-ERR max number of clients reached",
}

#: Errors the fake MongoDB server answers to every command after ``hello``.
MONGO_ERRORS: dict[str, dict[str, Any]] = {
    "auth": {
        "ok": 0.0,
        "errmsg": "Authentication failed.",
        "code": 18,
        "codeName": "AuthenticationFailed",
    },
    "unauthorized": {
        "ok": 0.0,
        "errmsg": "command find requires authentication",
        "code": 13,
        "codeName": "Unauthorized",
    },
    "ns_not_found": {
        "ok": 0.0,
        "errmsg": "ns not found",
        "code": 26,
        "codeName": "NamespaceNotFound",
    },
    "exceeded_time": {
        "ok": 0.0,
        "errmsg": "operation exceeded time limit",
        "code": 50,
        "codeName": "MaxTimeMSExpired",
    },
    "shutdown": {
        "ok": 0.0,
        "errmsg": "The server is in quiesce mode and will shut down",
        "code": 91,
        "codeName": "ShutdownInProgress",
    },
    "not_primary": {
        "ok": 0.0,
        "errmsg": "not primary",
        "code": 10107,
        "codeName": "NotWritablePrimary",
    },
    "host_unreachable": {
        "ok": 0.0,
        "errmsg": "Connection refused",
        "code": 6,
        "codeName": "HostUnreachable",
    },
}


@contextlib.contextmanager
def start() -> Iterator[SdkEndpoints]:
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sdk-corpus-")))
        http = _HTTPServer((LOOPBACK, 0), _Handler)
        threading.Thread(target=http.serve_forever, daemon=True).start()
        stack.callback(http.server_close)
        stack.callback(http.shutdown)
        held: list[socket.socket] = []
        stack.callback(lambda: [c.close() for c in held])

        def listener(kind: str) -> int:
            lst = Listener(lambda conn: _behave(kind, conn, held))
            stack.callback(lst.close)
            return lst.port

        ports = {k: listener(k) for k in ("silent", "close_now", "garbage", "truncated")}
        resp = {}
        for name, line in RESP_ERRORS.items():
            lst = Listener(_resp_error(line))
            stack.callback(lst.close)
            resp[name] = lst.port
        mongo = {}
        for name, doc in MONGO_ERRORS.items():
            lst = Listener(_mongo_error(doc))
            stack.callback(lst.close)
            mongo[name] = lst.port
        pg = stack.enter_context(postgres(tmp))
        redis_port = stack.enter_context(redis_server(tmp))
        ssh_port = stack.enter_context(sshd(tmp))
        yield SdkEndpoints(
            http=int(http.server_address[1]),
            closed=free_port(),
            pg=pg,
            redis=redis_port,
            sshd=ssh_port,
            tmp=tmp,
            resp=resp,
            mongo=mongo,
            **ports,
        )
