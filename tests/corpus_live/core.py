"""Cases, families, loopback servers and the pack that raises each failure for real.

A *family* is one library or tool (``pymysql``, ``mosquitto_pub``...) with the servers it
needs, started on 127.0.0.1 by its ``setup`` (a real Debian daemon, a real Python server,
or a fake that answers the product's documented error bodies). A *case* makes the real
library fail once; it names the codes a careful engineer would want an agent to get.

Scoring runs every case inside the handler of a real pack, invoked in-process through the
control plane's :class:`~control_plane._kernel.invoke.Invoker` with the classifiers a control
plane with no pack plugins has: the code is the one a caller receives.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import pkgutil
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Generic, TypeVar

LOOPBACK = "127.0.0.1"
UNRESOLVABLE = "no-such-host.invalid"

AUTH = frozenset({"auth_failed"})
NF = frozenset({"not_found"})
TO = frozenset({"timeout"})
RL = frozenset({"rate_limited"})
NET = frozenset({"network_error"})
INT = frozenset({"internal_error"})
DEP = frozenset({"dependency_missing"})
EXISTS = frozenset({"already_exists"})
QUOTA = frozenset({"quota_exhausted"})

HALVES = (
    "visible",
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
    "heldout9",
    "heldout10",
    "heldout11",
    "heldout12",
    "heldout13",
    "heldout14",
    "heldout15",
    "heldout16",
    "heldout17",
    "heldout18",
    "heldout19",
    "heldout20",
    "heldout21",
)


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    half: str
    expect: frozenset[str]
    reason: str
    run: Callable[[Any], Any]
    #: The ``retry_after`` a ``rate_limited`` answer must carry (the server's own delay).
    retry_after: float | None = None


@dataclass
class Family:
    """One library or tool, the servers it fails against, and its cases."""

    name: str
    half: str
    server: str
    setup: Callable[[contextlib.ExitStack, Path], Any] | None = None
    cases: list[Case] = field(default_factory=list)

    def add(
        self,
        id: str,
        expect: frozenset[str],
        reason: str,
        run: Callable[[Any], Any],
        *,
        retry_after: float | None = None,
    ) -> None:
        self.cases.append(
            Case(f"{self.name}:{id}", self.name, self.half, expect, reason, run, retry_after)
        )

    def case(
        self, id: str, expect: frozenset[str], reason: str, *, retry_after: float | None = None
    ) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
        def register(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
            self.add(id, expect, reason, fn, retry_after=retry_after)
            return fn

        return register


FAMILIES: dict[str, Family] = {}


def family(
    name: str,
    server: str,
    setup: Callable[[contextlib.ExitStack, Path], Any] | None = None,
    *,
    half: str,
) -> Family:
    assert half in HALVES, half
    assert name not in FAMILIES, name
    fam = Family(name, half, server, setup)
    FAMILIES[name] = fam
    return fam


def load(half: str | None = None) -> list[Family]:
    """Every family of ``half`` (both halves when ``None``), modules imported on demand."""
    for h in HALVES if half is None else (half,):
        package = importlib.import_module(f"corpus_live.{h}")
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            importlib.import_module(f"corpus_live.{h}.{info.name}")
    return [f for f in FAMILIES.values() if half is None or f.half == half]


# -- loopback helpers -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 30.0, proc: subprocess.Popen[Any] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before port {port} opened")
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on {port} within {timeout}s")


def daemon(
    stack: contextlib.ExitStack,
    argv: list[str],
    port: int,
    *,
    log: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> subprocess.Popen[Any]:
    """Start ``argv`` (a server listening on ``port``), stopped when ``stack`` closes."""
    out = open(log, "wb")  # noqa: SIM115 - closed by the stack
    stack.callback(out.close)
    proc = subprocess.Popen(
        argv,
        stdout=out,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, **(env or {})),
        start_new_session=True,
    )

    def stop() -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    stack.callback(stop)
    try:
        wait_port(port, timeout, proc)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}: {log.read_text(errors='replace')[-2000:]}") from None
    return proc


class _Listener:
    """A TCP listener on 127.0.0.1 that treats each connection with ``behave``."""

    def __init__(self, behave: Callable[[socket.socket], None]) -> None:
        self.sock = socket.socket()
        self.sock.bind((LOOPBACK, 0))
        self.sock.listen(64)
        self.port = int(self.sock.getsockname()[1])
        self.behave = behave
        self.held: list[socket.socket] = []
        self.closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            self.behave(conn)

    def close(self) -> None:
        self.closed = True
        self.sock.close()
        for c in self.held:
            with contextlib.suppress(OSError):
                c.close()


def silent(stack: contextlib.ExitStack) -> int:
    """A port whose server accepts and never says a word (the client's timeout fires)."""
    lst = _Listener(lambda conn: None)
    stack.callback(lst.close)
    return lst.port


def close_now(stack: contextlib.ExitStack) -> int:
    """A port whose server accepts and closes without a word: it first drains what the
    client sends (up to 0.2 s), so the client always meets a clean end of stream, never a
    reset that depends on who was faster."""

    def behave(conn: socket.socket) -> None:
        conn.settimeout(0.2)
        with contextlib.suppress(OSError):
            while conn.recv(65536):
                pass
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_RDWR)
        conn.close()

    lst = _Listener(behave)
    stack.callback(lst.close)
    return lst.port


def garbage(stack: contextlib.ExitStack, data: bytes = b"\x00\xffNOT A PROTOCOL\r\n") -> int:
    """A port whose server writes bytes of no protocol, then closes."""

    def behave(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            conn.sendall(data)
        conn.close()

    lst = _Listener(behave)
    stack.callback(lst.close)
    return lst.port


def closed_port() -> int:
    """A port nothing listens on (connection refused)."""
    return free_port()


# -- a fake HTTP server answering one canned reply at a time -------------------------


@dataclass
class Reply:
    status: int
    body: Any = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


class FakeHTTP:
    """A threaded HTTP server on 127.0.0.1: every request gets the current :class:`Reply`
    (or what ``route(method, path, body)`` returns, when set)."""

    def __init__(self) -> None:
        self.reply = Reply(200, {})
        self.route: Callable[[str, str, bytes], Reply | None] | None = None
        self.requests: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append((self.command, self.path))
                reply = outer.route(self.command, self.path, body) if outer.route else None
                reply = reply or outer.reply
                data = reply.body
                if isinstance(data, str):
                    data = data.encode()
                elif not isinstance(data, bytes):
                    data = json.dumps(data).encode()
                self.send_response(reply.status)
                if reply.content_type and "content-type" not in {k.lower() for k in reply.headers}:
                    self.send_header("Content-Type", reply.content_type)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _any
            do_OPTIONS = do_PROPFIND = do_MKCOL = do_COPY = do_MOVE = _any  # WebDAV

        self.server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.url = f"http://{LOOPBACK}:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def set(
        self,
        status: int,
        body: Any = b"",
        headers: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        self.reply = Reply(status, body, dict(headers or {}), content_type)
        self.route = None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def fake_http(stack: contextlib.ExitStack) -> FakeHTTP:
    srv = FakeHTTP()
    stack.callback(srv.close)
    return srv


@dataclass
class Net:
    """The transport failures every family meets: ports that refuse, hang, drop."""

    closed: int
    silent: int
    close_now: int
    garbage: int


def net(stack: contextlib.ExitStack) -> Net:
    return Net(closed_port(), silent(stack), close_now(stack), garbage(stack))


S = TypeVar("S")


@dataclass
class Served(Generic[S]):
    """A family's context: the real server its cases fail against, and the transport
    failures of :class:`Net`."""

    server: S
    net: Net


def served(
    start: Callable[[contextlib.ExitStack, Path], S],
) -> Callable[[contextlib.ExitStack, Path], Served[S]]:
    """The setup of a family against one real server: ``start`` it, then the :func:`net`."""

    def setup(stack: contextlib.ExitStack, work: Path) -> Served[S]:
        return Served(start(stack, work), net(stack))

    return setup


def run_async(coro: Any) -> Any:
    """Run an async case's coroutine on a loop of its own (the pack's worker thread)."""
    return asyncio.run(coro)


def require(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        raise RuntimeError(f"not installed: {missing} (scripts/setup, CP_APT_DEV)")


def cli(argv: list[str], *, timeout: float = 20.0, input: bytes | None = None) -> None:
    """Run a CLI as a pack would: ``check=True`` and captured output, so the failure the
    pack sees is ``CalledProcessError`` with the tool's stderr on it."""
    subprocess.run(argv, capture_output=True, check=True, timeout=timeout, input=input)


def scratch(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"corpus44-{prefix}-"))


@contextlib.contextmanager
def family_env(fam: Family, root: Path) -> Iterator[Any]:
    with contextlib.ExitStack() as stack:
        work = root / fam.name.replace("/", "_")
        work.mkdir(parents=True, exist_ok=True)
        yield fam.setup(stack, work) if fam.setup is not None else None


# -- table-driven HTTP families ---------------------------------------------------------


@dataclass
class Http:
    """A fake product server and the ports that refuse, hang and drop."""

    http: FakeHTTP
    net: Net


def http_setup(stack: contextlib.ExitStack, work: Path) -> Http:
    return Http(fake_http(stack), net(stack))


def transport_cases(
    fam: Family,
    connect: Callable[[str, int], Any],
    *,
    dns_port: int,
    refused: str = "nothing listens",
    dns: str = "host does not resolve",
    silent: str = "server never answers",
    dropped: str = "closed at once",
) -> None:
    """The transport failures every family meets, each with its reason: ``connect(host,
    port)`` to a port nothing listens on, to an unresolvable host (at ``dns_port``), to a
    listener that never answers and to one that closes at once."""
    fam.add("refused", NET, refused, lambda c: connect(LOOPBACK, c.net.closed))
    fam.add("dns", NET, dns, lambda c: connect(UNRESOLVABLE, dns_port))
    fam.add("silent", TO, silent, lambda c: connect(LOOPBACK, c.net.silent))
    fam.add("dropped", NET, dropped, lambda c: connect(LOOPBACK, c.net.close_now))


#: (id, status, body, headers, expect, retry_after, reason)
Row = tuple[str, int, Any, Mapping[str, str], frozenset[str], float | None, str]


def http_cases(
    fam: Family,
    call: Callable[[str], Any],
    rows: list[Row],
    *,
    content_type: str = "application/json",
    transport: bool = True,
) -> None:
    """One case per row (the fake answers it, ``call(base_url)`` fails on it), and the
    transport failures: refused, unresolvable, silent, dropped."""
    for id, status, body, headers, expect, ra, why in rows:

        def run(ctx: Http, s: int = status, b: Any = body, h: Any = headers) -> Any:
            ctx.http.set(s, b, h, content_type)
            return call(ctx.http.url)

        fam.add(id, expect, f"HTTP {status}: {why}", run, retry_after=ra)
    if transport:
        transport_cases(fam, lambda host, port: call(f"http://{host}:{port}"), dns_port=80)
