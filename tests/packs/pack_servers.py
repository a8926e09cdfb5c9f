"""Real servers on 127.0.0.1 for the built-in packs' tests (and the stderr capture script).

* :class:`HTTPServerThread` -- ``http.server`` in a thread, any handler class.
* :class:`RawTCPServer` -- a TCP listener with a fixed misbehaviour: ``silent`` (accepts,
  never answers), ``reset`` (reads the request, then closes with ``SO_LINGER 0`` so the
  peer sees a TCP RST), ``garbage`` (answers bytes that are not a protocol).
* :class:`BacklogFull` -- a listener whose accept backlog is full, so ``connect()`` hangs
  until the client's connect timeout: a real connect timeout without leaving loopback.
* :func:`git_daemon` -- ``git daemon`` on a free loopback port, killed afterwards.
* :class:`GitSmartHTTP` -- smart-HTTP git (``git http-backend`` as CGI) behind Basic auth.
* :func:`make_repo` -- a bare repository with known commits, a branch and a tag.

Nothing here contacts anything but 127.0.0.1.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from child_processes import tied

LOOPBACK = "127.0.0.1"

#: A host name that fails to resolve *inside the local resolver*: longer than the 255
#: octets a DNS name may have, so glibc refuses to build a query and no packet leaves
#: the machine (a plain ``*.invalid`` name is still sent to the configured nameserver).
UNRESOLVABLE_HOST = ".".join(c * 60 for c in "abcde") + ".invalid"


def free_port() -> int:
    """A loopback TCP port that nothing listens on (at the time of asking)."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def refusing_socket() -> socket.socket:
    """A loopback TCP socket bound and never listening: connecting to its port is refused
    for as long as it is open, and no other server can take the port meanwhile (a port from
    :func:`free_port` may be taken by any process once it is closed)."""
    sock = socket.socket()
    sock.bind((LOOPBACK, 0))
    return sock


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that does not log to stderr."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    """Clients that hang up early (timeouts under test) are expected, not errors."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class HTTPServerThread:
    """``ThreadingHTTPServer`` on 127.0.0.1:0 served from a daemon thread."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = _Server((LOOPBACK, 0), handler)
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str = "/") -> str:
        return f"http://{LOOPBACK}:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> HTTPServerThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RawTCPServer:
    """A loopback TCP listener that misbehaves in one fixed way per instance."""

    def __init__(self, behaviour: str) -> None:
        assert behaviour in {"silent", "reset", "garbage"}
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((LOOPBACK, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self.behaviour == "silent":
                self._held.append(conn)
                continue
            conn.settimeout(2.0)
            with contextlib.suppress(OSError):
                conn.recv(65536)
            if self.behaviour == "garbage":
                with contextlib.suppress(OSError):
                    conn.sendall(b"hello, this is not the protocol you are looking for\n")
            else:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self._thread.join(timeout=2)
        for conn in self._held:
            conn.close()

    def __enter__(self) -> RawTCPServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BacklogFull:
    """A listener with backlog 0 whose queue is filled, so new connects hang (SYNs dropped)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind((LOOPBACK, 0))
        self.sock.listen(0)
        self.port = int(self.sock.getsockname()[1])
        self._fillers: list[socket.socket] = []
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect((LOOPBACK, self.port))
            self._fillers.append(filler)
        time.sleep(0.1)

    def close(self) -> None:
        for filler in self._fillers:
            filler.close()
        self.sock.close()

    def __enter__(self) -> BacklogFull:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- git --------------------------------------------------------------------------

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.test",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.test",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}


def git(*args: str, cwd: Path | None = None) -> str:
    """Run git for fixture set-up; its stdout, stripped."""
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@dataclass(frozen=True)
class Repo:
    """A bare repository under ``root`` named ``name`` and what it contains."""

    root: Path
    name: str
    main_sha: str
    feature_sha: str
    tag_sha: str

    @property
    def path(self) -> Path:
        return self.root / self.name


def make_repo(root: Path, name: str = "demo.git") -> Repo:
    """A bare repo with two commits on ``main``, a ``feature`` branch and tag ``v1.0``."""
    work = root / (name + ".work")
    git("init", "-q", "-b", "main", str(work))
    (work / "README.md").write_text("hello\n")
    git("add", "README.md", cwd=work)
    git("commit", "-q", "-m", "first", cwd=work)
    git("tag", "v1.0", cwd=work)
    tag_sha = git("rev-parse", "HEAD", cwd=work)
    (work / "README.md").write_text("hello again\n")
    git("commit", "-q", "-am", "second", cwd=work)
    main_sha = git("rev-parse", "HEAD", cwd=work)
    git("checkout", "-q", "-b", "feature", cwd=work)
    (work / "feature.txt").write_text("feature\n")
    git("add", "feature.txt", cwd=work)
    git("commit", "-q", "-m", "feature", cwd=work)
    feature_sha = git("rev-parse", "HEAD", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    git("clone", "-q", "--bare", str(work), str(root / name))
    return Repo(root, name, main_sha, feature_sha, tag_sha)


def _wait_port(port: int, deadline: float = 10.0, host: str = LOOPBACK) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection((host, port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {host}:{port}")


@contextlib.contextmanager
def git_daemon(
    base: Path, *, informative_errors: bool = False, listen: str = LOOPBACK
) -> Iterator[int]:
    """``git daemon`` serving every repo under ``base`` on a free loopback port (of
    ``listen``: ``::1`` for IPv6)."""
    port = free_port()
    argv = [
        # git-daemon itself, not `git daemon`: git would run it as a child of its own, and
        # the kernel's parent-death signal (`tied`) reaches only the process it was set in.
        str(Path(git("--exec-path")) / "git-daemon"),
        "--reuseaddr",
        "--export-all",
        f"--base-path={base}",
        f"--listen={listen}",
        f"--port={port}",
    ]
    if informative_errors:
        argv.append("--informative-errors")
    argv.append(str(base))
    proc = subprocess.Popen(
        tied(argv),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_port(port, host=listen)
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


class GitSmartHTTP:
    """Smart-HTTP git over ``git http-backend``, requiring Basic ``user``/``password``.

    ``on_request`` runs at the start of every request, while the client waits for the
    answer (the tests use it to read the client processes' argv from ``/proc``).
    """

    def __init__(
        self,
        root: Path,
        user: str,
        password: str,
        *,
        on_request: Callable[[], None] | None = None,
    ) -> None:
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        project_root = str(root)

        class Handler(QuietHandler):
            def _serve(self) -> None:
                if on_request is not None:
                    on_request()  # the client is mid-request: its processes are alive
                if self.headers.get("Authorization") != expected:
                    body = b"Authentication required\n"
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else b""
                path, _, query = self.path.partition("?")
                env = {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "GIT_PROJECT_ROOT": project_root,
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "REQUEST_METHOD": self.command,
                    "PATH_INFO": path,
                    "QUERY_STRING": query,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(len(data)),
                    "REMOTE_USER": user,
                    "REMOTE_ADDR": LOOPBACK,
                    "GATEWAY_INTERFACE": "CGI/1.1",
                }
                for header, var in (
                    ("Git-Protocol", "HTTP_GIT_PROTOCOL"),
                    ("Content-Encoding", "HTTP_CONTENT_ENCODING"),
                ):
                    if self.headers.get(header):
                        env[var] = self.headers[header]
                done = subprocess.run(
                    ["git", "http-backend"], input=data, env=env, capture_output=True, check=False
                )
                head, _, body = done.stdout.partition(b"\r\n\r\n")
                status = 200
                headers: list[tuple[str, str]] = []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = _serve
            do_POST = _serve

        self._server = HTTPServerThread(Handler)
        self.port = self._server.port

    def url(self, path: str) -> str:
        return self._server.url(path)

    def close(self) -> None:
        self._server.close()

    def __enter__(self) -> GitSmartHTTP:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
