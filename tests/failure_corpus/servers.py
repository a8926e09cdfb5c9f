"""Misbehaving servers on 127.0.0.1 for the failure corpus, all started by :func:`start`."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import hashlib
import logging
import os
import socket
import ssl
import struct
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import trustme
import websockets.sync.server
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

# The loopback helpers the pack tests use (tests/packs/pack_servers.py), shared as
# tests/data/stderr/capture.py shares them.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "packs"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # child_processes

from pack_servers import LOOPBACK, UNRESOLVABLE_HOST, BacklogFull, refusing_socket

__all__ = ["LOOPBACK", "PLANTED", "RETRY_AFTER", "UNRESOLVABLE_HOST", "Endpoints", "start"]

#: A secret planted in every reply body, status detail and URL the corpus uses.
PLANTED = "tok-PLANTED-CORPUS-9313"
RETRY_AFTER = 7


# -- HTTP statuses --------------------------------------------------------------------


class StatusHandler(BaseHTTPRequestHandler):
    """``/status/NNN`` answers NNN (``Retry-After`` on 429/503); anything else 200."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        status = 200
        if self.path.startswith("/status/"):
            status = int(self.path.split("/")[2][:3])
        body = f'{{"error": "failed", "token": "{PLANTED}"}}'.encode()
        self.send_response(status)
        if status in {429, 503}:
            self.send_header("Retry-After", str(RETRY_AFTER))
        if status == 401:
            self.send_header("WWW-Authenticate", 'Basic realm="corpus"')
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = _answer
    do_POST = _answer
    do_HEAD = _answer

    def do_CONNECT(self) -> None:
        """As a proxy that refuses every tunnel: ``CONNECT proxy407.invalid:443`` answers
        407 (the target host names the status; nothing resolves it)."""
        host = self.path.split(":")[0]
        status = int(host[5:8]) if host.startswith("proxy") and host[5:8].isdigit() else 502
        self.send_response(status)
        if status == 407:
            self.send_header("Proxy-Authenticate", 'Basic realm="corpus proxy"')
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass


# -- raw TCP behaviours -------------------------------------------------------------

_TRUNCATED = (
    b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n0123456789"
)
_CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
    b"100\r\n0123456789"
)
_GARBAGE = b"\x00\x01this is not HTTP at all\r\n\r\n"


def _read_request(conn: socket.socket) -> bytes:
    """A request's head as far as it came (up to the blank line, 64 KiB, a close or 2 s)."""
    conn.settimeout(2.0)
    data = b""
    with contextlib.suppress(OSError):
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    return data


def _behave(kind: str, conn: socket.socket, held: list[socket.socket]) -> None:
    if kind == "silent":
        held.append(conn)
        return
    if kind == "banner":  # an SSH/SMTP-like client waits for a greeting that never comes
        held.append(conn)
        return
    if kind == "close_now":
        conn.close()
        return
    _read_request(conn)
    with contextlib.suppress(OSError):
        if kind == "truncated":
            conn.sendall(_TRUNCATED)
        elif kind == "chunked":
            conn.sendall(_CHUNKED)
        elif kind == "garbage":
            conn.sendall(_GARBAGE)
        elif kind == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


class Listener:
    """A loopback listener running ``serve(conn)`` per connection in a thread."""

    def __init__(
        self,
        serve: Callable[[socket.socket], None],
        family: int = socket.AF_INET,
        address: Any = (LOOPBACK, 0),
    ) -> None:
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        if family == socket.AF_INET:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(address)
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1]) if family == socket.AF_INET else 0
        self._serve = serve
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._safe, args=(conn,), daemon=True).start()

    def _safe(self, conn: socket.socket) -> None:
        with contextlib.suppress(Exception):
            self._serve(conn)

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self._thread.join(timeout=2)


# -- TLS ----------------------------------------------------------------------------


def _tls_http(ctx: ssl.SSLContext) -> Callable[[socket.socket], None]:
    def serve(conn: socket.socket) -> None:
        conn.settimeout(3.0)
        # A second descriptor keeps the connection open after a failed handshake closes
        # the TLS socket: like a real server, the alert is on the wire and what the
        # client still sends is read until it hangs up, so closing cannot become an RST
        # that overtakes the alert.
        raw = conn.dup()
        try:
            tls = ctx.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError):
            raw.settimeout(1.0)
            with contextlib.suppress(OSError):
                while raw.recv(65536):
                    pass
            raw.close()
            return
        raw.close()
        try:
            _read_request(tls)
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        except (OSError, ssl.SSLError):
            pass
        finally:
            with contextlib.suppress(OSError):
                tls.close()

    return serve


# -- SMTP ---------------------------------------------------------------------------


def _smtp(kind: str) -> Callable[[socket.socket], None]:
    def serve(conn: socket.socket) -> None:
        conn.settimeout(3.0)
        f = conn.makefile("rwb")

        def say(line: str) -> None:
            f.write(line.encode() + b"\r\n")
            f.flush()

        if kind == "421":
            say("421 corpus.test service not available, closing channel")
            conn.close()
            return
        say("220 corpus.test ESMTP")
        while True:
            line = f.readline()
            if not line:
                break
            verb = line.decode("latin-1").strip().split(" ")[0].upper()
            if verb in {"EHLO", "HELO"}:
                if kind == "drop":
                    conn.close()
                    return
                say("250-corpus.test")
                say("250 AUTH PLAIN LOGIN")
            elif verb == "AUTH":
                say("535 5.7.8 Authentication credentials invalid")
            elif verb == "MAIL":
                say("452 4.3.1 Insufficient system storage" if kind == "full" else "250 OK")
            elif verb == "RCPT":
                if kind == "greylist":
                    say("451 4.7.1 Greylisted, please try again later")
                else:
                    say("550 5.1.1 No such user here")
            elif verb == "RSET":
                say("250 OK")
            elif verb == "QUIT":
                say("221 bye")
                break
            else:
                say("502 command not implemented")
        conn.close()

    return serve


# -- FTP, IMAP, POP3 ------------------------------------------------------------------

#: A reply ending in this hangs up after it is sent.
HANG_UP = "<close>"


def _lines(
    greeting: str, replies: dict[str, str], tagged: bool = False
) -> Callable[[socket.socket], None]:
    """A line protocol server: ``greeting``, then for each command line the reply of its
    verb (the first word; with ``tagged``, IMAP's, the second, and ``{tag}`` in the reply is
    the command's tag); ``"*"`` answers unknown verbs. A reply ending in :data:`HANG_UP`
    closes the connection after it."""

    def serve(conn: socket.socket) -> None:
        conn.settimeout(3.0)
        f = conn.makefile("rb")

        def send(text: str) -> bool:
            conn.sendall(text.removesuffix(HANG_UP).encode())
            return text.endswith(HANG_UP)

        if send(greeting):
            conn.close()
            return
        while True:
            words = f.readline().decode("latin-1").split()
            if not words:
                break
            tag, verb = (words[0], words[1:2]) if tagged else ("", words[:1])
            name = verb[0].upper() if verb else ""
            reply = replies.get(name, replies.get("*", ""))
            if send(reply.replace("{tag}", tag)) or name in {"QUIT", "LOGOUT"}:
                break
        conn.close()

    return serve


_FTP_LOGIN = {"USER": "331 Password required\r\n", "PASS": "230 Logged in\r\n", "*": "200 OK\r\n"}
#: FTP behaviours: name -> (greeting, replies).
FTP: dict[str, tuple[str, dict[str, str]]] = {
    "login_530": ("220 corpus FTP\r\n", {**_FTP_LOGIN, "PASS": "530 Login incorrect.\r\n"}),
    "cwd_550": ("220 corpus FTP\r\n", {**_FTP_LOGIN, "CWD": "550 Failed to change directory.\r\n"}),
    "size_550": (
        "220 corpus FTP\r\n",
        {**_FTP_LOGIN, "SIZE": "550 No such file or directory.\r\n"},
    ),
    "greeting_421": ("421 Too many connections from this IP\r\n" + HANG_UP, {}),
    "pasv_425": (
        "220 corpus FTP\r\n",
        {**_FTP_LOGIN, "PASV": "425 Can't open data connection.\r\n", "EPSV": "425 No.\r\n"},
    ),
    "size_451": (
        "220 corpus FTP\r\n",
        {**_FTP_LOGIN, "SIZE": "451 Local error in processing.\r\n"},
    ),
    "mkd_553": ("220 corpus FTP\r\n", {**_FTP_LOGIN, "MKD": "553 Could not create file.\r\n"}),
}

_IMAP_GREETING = "* OK corpus IMAP ready\r\n"
_IMAP = {
    "CAPABILITY": "* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n{tag} OK done\r\n",
    "LOGIN": "{tag} OK logged in\r\n",
    "LOGOUT": "* BYE bye\r\n{tag} OK done\r\n",
    "*": "{tag} OK done\r\n",
}
#: IMAP behaviours: name -> replies (tagged).
IMAP: dict[str, dict[str, str]] = {
    "authenticationfailed": {
        **_IMAP,
        "LOGIN": f"{{tag}} NO [AUTHENTICATIONFAILED] Invalid credentials for {PLANTED}\r\n",
    },
    "expired": {**_IMAP, "LOGIN": "{tag} NO [EXPIRED] Password expired\r\n"},
    "unavailable": {
        **_IMAP,
        "LOGIN": "{tag} NO [UNAVAILABLE] Temporary authentication failure\r\n",
    },
    "nonexistent": {**_IMAP, "SELECT": "{tag} NO [NONEXISTENT] Unknown mailbox\r\n"},
    "bye": {**_IMAP, "SELECT": "* BYE server shutting down\r\n" + HANG_UP},
    "drop": {**_IMAP, "LOGIN": HANG_UP},
}

_POP = {"USER": "+OK\r\n", "PASS": "+OK logged in\r\n", "*": "+OK\r\n"}
#: POP3 behaviours: name -> replies.
POP: dict[str, dict[str, str]] = {
    "auth": {**_POP, "PASS": f"-ERR [AUTH] Authentication failed for {PLANTED}\r\n"},
    "in_use": {**_POP, "PASS": "-ERR [IN-USE] Mailbox locked by another session\r\n"},
    "sys_temp": {**_POP, "PASS": "-ERR [SYS/TEMP] System busy, try later\r\n"},
    "login_delay": {**_POP, "PASS": "-ERR [LOGIN-DELAY] Minimum time between logins\r\n"},
}


# -- gRPC ---------------------------------------------------------------------------


def _retry_status() -> grpc.Status:
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=RETRY_AFTER)))
    return rpc_status.to_status(
        status_pb2.Status(
            code=code_pb2.RESOURCE_EXHAUSTED,
            message=f"quota exceeded for {PLANTED}",
            details=[detail],
        )
    )


def _upstream_tls(upstream: tuple[int, str]) -> None:
    """A TLS handshake with the corpus server whose certificate is from another CA: what a
    gRPC server's own upstream call raises (``ssl.SSLCertVerificationError``)."""
    port, cafile = upstream
    ctx = ssl.create_default_context(cafile=cafile)
    with (
        socket.create_connection((LOOPBACK, port), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname=LOOPBACK),
    ):
        pass


class _Failing(grpc.GenericRpcHandler):
    """``/corpus.Fail/<STATUS>`` aborts with that status; ``RETRY``, ``SLOW``, ``BIG``,
    ``RATE``, ``OK``; ``UPSTREAM_TLS_UNAVAILABLE`` reports its own upstream's failed TLS
    handshake as ``UNAVAILABLE``, ``UPSTREAM_TLS_RAISES`` lets it escape (``UNKNOWN``)."""

    def __init__(self, upstream: tuple[int, str] | None = None) -> None:
        self.upstream = upstream

    def service(self, handler_call_details: Any) -> Any:
        name = handler_call_details.method.rsplit("/", 1)[-1]

        def behave(request: bytes, context: grpc.ServicerContext) -> bytes:
            if name.startswith("UPSTREAM_TLS") and self.upstream is not None:
                if name == "UPSTREAM_TLS_RAISES":
                    _upstream_tls(self.upstream)
                try:
                    _upstream_tls(self.upstream)
                except ssl.SSLError as exc:
                    context.abort(grpc.StatusCode.UNAVAILABLE, f"billing upstream: {exc}")
            if name == "RETRY":
                context.abort_with_status(_retry_status())
            if name == "SLOW":
                end = time.monotonic() + 5
                while context.is_active() and time.monotonic() < end:
                    time.sleep(0.02)
                return b""
            if name == "BIG":
                return b"x" * 4096
            if name == "OK":
                return b"ok"
            if name == "RATE":  # throttling whose text says "exceeds ... limit"
                context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"request rate exceeds the per-project limit of 100/min ({PLANTED})",
                )
            context.abort(grpc.StatusCode[name], f"failed on purpose ({PLANTED})")
            return b""

        return grpc.unary_unary_rpc_method_handler(behave)


def _grpc_server(
    credentials: Any = None, upstream: tuple[int, str] | None = None
) -> tuple[grpc.Server, int]:
    handlers = [_Failing(upstream)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=handlers)
    if credentials is None:
        port = server.add_insecure_port(f"{LOOPBACK}:0")
    else:
        port = server.add_secure_port(f"{LOOPBACK}:0", credentials)
    server.start()
    return server, port


# -- WebSocket ------------------------------------------------------------------------

#: ``/status/NNN`` rejects the opening handshake with NNN; ``/plain`` answers a plain 200.
#: After the handshake, ``/close/NNNN/REASON`` closes with that code and reason, ``/big``
#: sends a 4 KiB message, ``/drop`` resets the TCP connection; anything else waits.


def _ws_request(conn: Any, request: Any) -> Any:
    path = request.path
    if path.startswith("/status/"):
        status = int(path.split("/")[2])
        response = conn.respond(status, f"refused ({PLANTED})\n")
        if status in {429, 503}:
            response.headers["Retry-After"] = str(RETRY_AFTER)
        return response
    if path == "/plain":
        return conn.respond(200, "a plain HTTP page, no WebSocket here\n")
    return None


def _ws_handler(ws: Any) -> None:
    path = ws.request.path
    if path.startswith("/close/"):
        _, _, code, reason = path.split("/", 3)
        reason = urllib.parse.unquote(reason)
        ws.close(int(code), reason)
        return
    if path == "/big":
        ws.send(b"x" * 4096)
    if path == "/drop":
        ws.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        ws.socket.close()
        return
    with contextlib.suppress(Exception):
        ws.recv(timeout=5)


def _ws_server() -> tuple[Any, int]:
    server = websockets.sync.server.serve(
        _ws_handler, LOOPBACK, 0, process_request=_ws_request, logger=_QUIET
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, int(server.socket.getsockname()[1])


#: What the WebSocket server logs about clients failing on purpose, dropped.
_QUIET = logging.getLogger("failure_corpus.websockets")
_QUIET.propagate = False
_QUIET.setLevel(logging.CRITICAL + 1)

_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def _ws_mute(conn: socket.socket, held: list[socket.socket]) -> None:
    """Accept the opening handshake, then never answer again (not even a ping)."""
    data = _read_request(conn)
    if b"\r\n\r\n" not in data:
        return  # the client went away before its handshake was complete
    key = ""
    for line in data.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "sec-websocket-key":
            key = value.strip()
    accept = base64.b64encode(hashlib.sha1((key + _WS_GUID).encode()).digest()).decode()
    with contextlib.suppress(OSError):
        conn.sendall(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept.encode() + b"\r\n\r\n"
        )
    held.append(conn)


# -- everything ---------------------------------------------------------------------


@dataclass
class Endpoints:
    """Where every server of the corpus listens (plain data: it crosses to served packs)."""

    http: int
    refused: int
    backlog: int
    raw: dict[str, int]
    tls: dict[str, int]
    smtp: dict[str, int]
    grpc: int
    grpc_tls: int
    grpc_mtls: int
    files: dict[str, str] = field(default_factory=dict)
    ftp: dict[str, int] = field(default_factory=dict)
    imap: dict[str, int] = field(default_factory=dict)
    pop: dict[str, int] = field(default_factory=dict)
    #: The WebSocket server, and one that goes mute after the opening handshake.
    ws: int = 0
    ws_mute: int = 0

    def url(self, path: str = "/", port: int | None = None, scheme: str = "http") -> str:
        return f"{scheme}://{LOOPBACK}:{self.http if port is None else port}{path}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Endpoints:
        return cls(**data)


def _pem(path: Path, blob: Any) -> str:
    blob.write_to_path(str(path))
    return str(path)


@contextlib.contextmanager
def start() -> Iterator[Endpoints]:
    """Start every server; yield their :class:`Endpoints`; stop them all."""
    closers: list[Callable[[], None]] = []
    tmp = tempfile.TemporaryDirectory(prefix="corpus-")
    root = Path(tmp.name)
    try:
        http = _HTTPServer((LOOPBACK, 0), StatusHandler)
        threading.Thread(target=http.serve_forever, daemon=True).start()
        closers.append(lambda: (http.shutdown(), http.server_close()))

        held: list[socket.socket] = []
        closers.append(lambda: [c.close() for c in held])
        raw: dict[str, int] = {}
        for kind in ("silent", "reset", "close_now", "truncated", "chunked", "garbage"):
            listener = Listener(lambda conn, kind=kind: _behave(kind, conn, held))
            closers.append(listener.close)
            raw[kind] = listener.port
        backlog = BacklogFull()
        closers.append(backlog.close)

        ca = trustme.CA()
        rogue = trustme.CA()
        files = {
            "ca": _pem(root / "ca.pem", ca.cert_pem),
            "rogue_ca": _pem(root / "rogue-ca.pem", rogue.cert_pem),
        }
        client = ca.issue_cert("client@corpus.test")
        rogue_client = rogue.issue_cert("client@corpus.test")
        files["client_cert"] = _pem(root / "client.pem", client.cert_chain_pems[0])
        files["client_key"] = _pem(root / "client.key", client.private_key_pem)
        files["rogue_client_cert"] = _pem(
            root / "rogue-client.pem", rogue_client.cert_chain_pems[0]
        )
        files["rogue_client_key"] = _pem(root / "rogue-client.key", rogue_client.private_key_pem)
        (root / "not-pem.pem").write_text("this is not a certificate\n")
        files["not_pem"] = str(root / "not-pem.pem")
        files["mismatched_key"] = files["rogue_client_key"]
        files["uds_missing"] = str(root / "nobody-listens.sock")
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(root / "stale.sock"))
        stale.close()  # the file stays: connecting to it is refused
        files["uds_stale"] = str(root / "stale.sock")
        files["not_executable"] = str(root / "not-executable-tool")
        Path(files["not_executable"]).write_text("#!/bin/sh\necho hi\n")
        os.chmod(files["not_executable"], 0o644)
        files["tmp"] = str(root)

        now = datetime.datetime.now(datetime.UTC)
        certs = {
            "good": ca.issue_cert(LOOPBACK, "localhost"),
            "expired": ca.issue_cert(
                LOOPBACK,
                "localhost",
                not_before=now - datetime.timedelta(days=30),
                not_after=now - datetime.timedelta(days=1),
            ),
            "wronghost": ca.issue_cert("other.corpus.test"),
            "untrusted": rogue.issue_cert(LOOPBACK, "localhost"),
        }
        tls: dict[str, int] = {}
        for name, cert in certs.items():
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            cert.configure_cert(ctx)
            listener = Listener(_tls_http(ctx))
            closers.append(listener.close)
            tls[name] = listener.port
        mtls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        certs["good"].configure_cert(mtls)
        ca.configure_trust(mtls)
        mtls.verify_mode = ssl.CERT_REQUIRED
        listener = Listener(_tls_http(mtls))
        closers.append(listener.close)
        tls["mtls"] = listener.port

        smtp: dict[str, int] = {}
        for kind in ("auth", "drop", "421", "rcpt", "greylist", "full"):
            listener = Listener(_smtp(kind))
            closers.append(listener.close)
            smtp[kind] = listener.port

        lines: dict[str, dict[str, int]] = {"ftp": {}, "imap": {}, "pop": {}}
        serves = [("ftp", name, _lines(*spec)) for name, spec in FTP.items()]
        serves += [("imap", n, _lines(_IMAP_GREETING, r, tagged=True)) for n, r in IMAP.items()]
        serves += [("pop", n, _lines("+OK corpus POP3 ready\r\n", r)) for n, r in POP.items()]
        for protocol, name, serve in serves:
            listener = Listener(serve)
            closers.append(listener.close)
            lines[protocol][name] = listener.port

        plain_grpc, grpc_port = _grpc_server(upstream=(tls["untrusted"], files["ca"]))
        closers.append(lambda: plain_grpc.stop(None))
        good = certs["good"]
        key, chain = good.private_key_pem.bytes(), b"".join(p.bytes() for p in good.cert_chain_pems)
        tls_grpc, grpc_tls_port = _grpc_server(grpc.ssl_server_credentials([(key, chain)]))
        closers.append(lambda: tls_grpc.stop(None))
        mtls_grpc, grpc_mtls_port = _grpc_server(
            grpc.ssl_server_credentials(
                [(key, chain)], root_certificates=ca.cert_pem.bytes(), require_client_auth=True
            )
        )
        closers.append(lambda: mtls_grpc.stop(None))

        ws_server, ws_port = _ws_server()
        closers.append(ws_server.shutdown)
        mute = Listener(lambda conn: _ws_mute(conn, held))
        closers.append(mute.close)

        refusing = refusing_socket()  # held: the refused port stays refused all along
        closers.append(refusing.close)

        yield Endpoints(
            http=int(http.server_address[1]),
            refused=int(refusing.getsockname()[1]),
            backlog=backlog.port,
            raw=raw,
            tls=tls,
            smtp=smtp,
            grpc=grpc_port,
            grpc_tls=grpc_tls_port,
            grpc_mtls=grpc_mtls_port,
            files=files,
            ws=ws_port,
            ws_mute=mute.port,
            **lines,
        )
    finally:
        for close in reversed(closers):
            with contextlib.suppress(Exception):
                close()
        tmp.cleanup()


def run_async(coro: Any) -> Any:
    """Run a coroutine on a fresh event loop (cases are called from sync code)."""
    return asyncio.run(coro)


if __name__ == "__main__":  # pragma: no cover - manual exploration
    with start() as ep:
        print(ep.to_dict())
        sys.stdout.flush()
        time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 1)
