"""The HTTP client behind http.fetch: checked egress, one deadline, typed failures."""

from __future__ import annotations

import base64
import codecs
import concurrent.futures
import contextlib
import functools
import http.client
import os
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import SplitResult, unquote, urljoin, urlsplit, urlunsplit

import orjson

from control_plane.errors import (
    FieldViolation,
    PackError,
    auth_failed,
    network_error,
    not_found,
    rate_limited,
    schema_mismatch,
    timeout,
)
from control_plane.tools import (
    DEFAULT_RETRY_AFTER,
    Address,
    CompiledSchema,
    Connector,
    EgressPolicy,
    EgressRefused,
    Resolver,
    check_schema,
    open_connection,
    parse_retry_after,
    scrub,
    system_resolver,
    tcp_connector,
)
from packs.credentials import basic_header, credential_header
from packs.http_fetch.cancel import Watch, watching
from packs.http_fetch.grant import DEFAULT_MESSAGE_LIMIT
from packs.http_fetch.secrets import Secrets, looks_secret

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_TIMEOUT", "SAFE_ACROSS_ORIGINS", "Fetch", "fetch"]

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_REDIRECTS = 5
USER_AGENT = "capability-packs-http.fetch/1.0"
CHUNK = 64 * 1024
#: The caller's headers still sent after a redirect leaves the origin: content negotiation
#: only. Any other header may be a credential under a name nobody can list in advance.
SAFE_ACROSS_ORIGINS: Final = frozenset(
    {"accept", "accept-language", "cache-control", "pragma", "user-agent"}
)

#: The resolver and connector every fetch uses (tests put a table and a spy here).
RESOLVER: Resolver = system_resolver
CONNECTOR: Connector | None = None  # None: a TCP connect the cancel watcher can shut down
#: ``getaddrinfo`` cannot be interrupted or given a timeout: names are resolved on these
#: threads while the fetch waits within its deadline, watching for cancellation. A name
#: whose DNS never answers holds one of them until the system resolver gives up (its own
#: timeouts, seconds), never the fetch; more such names than threads wait their turn,
#: each fetch still within its deadline.
_DNS_THREADS = 8
_POLL = 0.05
_dns: dict[int, concurrent.futures.ThreadPoolExecutor] = {}


def _dns_pool() -> concurrent.futures.ThreadPoolExecutor:
    """This process's resolver threads (a forked child gets its own: it has no threads)."""
    pid = os.getpid()
    pool = _dns.get(pid)
    if pool is None:
        _dns.clear()
        pool = _dns.setdefault(
            pid,
            concurrent.futures.ThreadPoolExecutor(
                _DNS_THREADS, thread_name_prefix="http.fetch-dns"
            ),
        )
    return pool


REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Response headers never returned: credentials and session material.
SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "set-cookie2",
        "x-api-key",
        "x-auth-token",
        "x-amz-security-token",
    }
)
_TEXT_TYPES = frozenset(
    {
        "application/xml",
        "application/javascript",
        "application/x-www-form-urlencoded",
        "application/x-ndjson",
        "image/svg+xml",
    }
)


class _Auth:
    """The credential as one header (or none), and the literals it is made of."""

    __slots__ = ("name", "secrets", "value")

    def __init__(
        self, name: str | None = None, value: str | None = None, secrets: list[str] | None = None
    ) -> None:
        self.name = name
        self.value = value
        self.secrets = secrets or []


def _secrets_of(value: str, password: str | None) -> list[str]:
    """What to scrub besides the patterns: the header value, its token, the password."""
    return [s for s in (value, password) if s]


def _auth(credential: Mapping[str, Any] | None, userinfo: tuple[str, str] | None) -> _Auth:
    if credential:
        name, value = credential_header(credential)
        password = credential["basic"]["password"] if "basic" in credential else None
        auth = _Auth(name, value, _secrets_of(value, password))
        if userinfo is not None and userinfo[1]:
            auth.secrets.append(userinfo[1])
        return auth
    if userinfo is not None:
        name, value = basic_header(*userinfo)
        return _Auth(name, value, _secrets_of(value, userinfo[1]))
    return _Auth()


def _strip_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=hostport)), (unquote(user), unquote(password))


def _origin(parts: SplitResult) -> tuple[str, str, int]:
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), _port(parts)


def _port(parts: SplitResult) -> int:
    try:
        port = parts.port
    except ValueError:
        raise PackError("http_error", "the URL has an invalid port") from None
    return port or (443 if parts.scheme.lower() == "https" else 80)


def compile_json_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """The caller's schema compiled (linear-time patterns, nothing fetched or read, bounded
    size and expansion: :mod:`control_plane._kernel.outside_schema`), or
    ``invalid_json_schema`` naming the fault."""
    fault = check_schema(schema)
    if fault is not None:
        if fault.startswith("/"):  # a place in the schema: say where
            place, _, why = fault.partition(": ")
            raise PackError("invalid_json_schema", f"json_schema{place.rstrip('/')}: {why}")
        raise PackError("invalid_json_schema", "json_schema is not a valid JSON Schema")
    try:
        return CompiledSchema(schema)
    except ValueError:
        raise PackError("invalid_json_schema", "json_schema does not compile") from None


class _Connection(http.client.HTTPConnection):
    """``http.client`` over a socket the egress check opened (never its own connect)."""

    def __init__(self, host: str, port: int, timeout: float, opener: _Opener) -> None:
        super().__init__(host, port, timeout=timeout)
        self._opener = opener

    def connect(self) -> None:
        self.sock = self._opener(self.host, self.port, None)


class _TLSConnection(http.client.HTTPSConnection):
    """TLS over a socket the egress check opened; the certificate is checked for the name."""

    def __init__(
        self, host: str, port: int, timeout: float, opener: _Opener, tls: ssl.SSLContext
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=tls)
        self._opener = opener
        self._tls = tls

    def connect(self) -> None:
        self.sock = self._opener(self.host, self.port, self._tls)


_Opener = Callable[[str, int, "ssl.SSLContext | None"], socket.socket]


class Fetch:
    """One fetch: a URL, a deadline, a grant, the redirects followed so far."""

    def __init__(
        self,
        doc: Mapping[str, Any],
        budget: float,
        *,
        egress: EgressPolicy | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        body_limit: int = DEFAULT_MESSAGE_LIMIT,
    ) -> None:
        url, userinfo = _strip_userinfo(str(doc["url"]))
        self.url = url
        self.auth = _auth(doc.get("credential"), userinfo)
        self.method = str(doc.get("method", "GET"))
        self.headers = {str(k): str(v) for k, v in (doc.get("headers") or {}).items()}
        self.secrets = Secrets(
            [
                *self.auth.secrets,
                *(v for k, v in self.headers.items() if looks_secret(k, v)),
            ]
        )
        self.egress = egress if egress is not None else EgressPolicy()
        self.cancelled = cancelled
        self.budget = budget
        self.deadline = time.monotonic() + budget
        asked = int(doc.get("max_bytes", DEFAULT_MAX_BYTES))
        self.max_bytes = min(asked, body_limit)
        self.capped = asked > body_limit
        self.max_redirects = int(doc.get("max_redirects", DEFAULT_MAX_REDIRECTS))
        self.follow = bool(doc.get("follow_redirects", True))
        self.redirects: list[str] = []
        self.watch: Watch | None = None
        schema = doc.get("json_schema")
        self.schema = compile_json_schema(schema) if isinstance(schema, Mapping) else None

    # -- the request loop ---------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        with watching(self.cancelled) as self.watch:
            return self._follow()

    def _follow(self) -> dict[str, Any]:
        method = self.method
        url = self.url
        first_origin = _origin(urlsplit(url))
        same_origin = True
        while True:
            parts = urlsplit(url)
            if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
                raise PackError("http_error", "the URL is not a usable http(s) URL")
            conn, sock, response = self._request(method, parts, same_origin)
            try:
                status = response.status
                location = response.getheader("Location")
                if self.follow and status in REDIRECTS:
                    if not location:
                        raise PackError(
                            "http_error", f"the server answered HTTP {status} without a Location"
                        )
                    next_url = urljoin(url, location.strip())
                    visited = {self.url, url, *self.redirects}
                    if len(self.redirects) >= self.max_redirects or next_url in visited:
                        raise PackError(
                            "too_many_redirects",
                            f"more than {self.max_redirects} redirects (or a redirect loop)",
                        )
                    self.redirects.append(next_url)
                    if _origin(urlsplit(next_url)) != first_origin:
                        # Once the chain left the origin, the caller's credential and any
                        # header that may be one stay behind for the rest of it.
                        same_origin = False
                    if status == 303 and method != "HEAD":
                        method = "GET"
                    url = next_url
                    continue
                self._raise_for_status(response, parts)
                body = self._read_body(response, sock, method, parts)
                return self._result(url, response, body)
            finally:
                conn.close()

    def remaining(self) -> float:
        if self.cancelled():
            raise timeout("the call was cancelled before the fetch finished")
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise timeout(f"the fetch did not finish within {self.budget:g}s")
        return left

    def _failure(self, exc: BaseException, where: str, doing: str) -> PackError:
        if self.cancelled():
            return timeout("the call was cancelled before the fetch finished")
        return _network_failure(exc, where, doing)

    def _where(self, parts: SplitResult) -> str:
        host = parts.hostname or "?"
        if ":" in host:
            host = f"[{host}]"
        return f"{host}:{_port(parts)}"

    def _attach(self, sock: socket.socket) -> None:
        if self.watch is not None:
            self.watch.sock = sock

    def _resolve(self, host: str, port: int) -> Sequence[Address]:
        """:data:`RESOLVER`'s answer, waited for within the deadline (cancellation ends it)."""
        pending = _dns_pool().submit(RESOLVER, host, port)
        while not pending.done():
            try:
                left = self.remaining()
            except PackError:
                pending.cancel()
                raise
            concurrent.futures.wait([pending], timeout=min(left, _POLL))
        return pending.result()

    def _open(self, host: str, port: int, tls: ssl.SSLContext | None) -> socket.socket:
        """The one way this pack reaches the network: resolve, check, connect, (TLS)."""
        connector = CONNECTOR or functools.partial(tcp_connector, on_socket=self._attach)
        sock = open_connection(
            host, port, self.egress, self.remaining, resolver=self._resolve, connector=connector
        )
        self._attach(sock)
        if tls is None:
            return sock
        try:
            wrapped = tls.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise
        self._attach(wrapped)
        return wrapped

    def _request_headers(self, same_origin: bool) -> dict[str, str]:
        headers = {"User-Agent": USER_AGENT, "Accept": "*/*"}
        for name, value in self.headers.items():
            if same_origin or name.lower() in SAFE_ACROSS_ORIGINS:
                headers[name] = value
        if same_origin and self.auth.name and self.auth.value is not None:
            headers[self.auth.name] = self.auth.value
        return headers

    def _request(
        self, method: str, parts: SplitResult, same_origin: bool
    ) -> tuple[http.client.HTTPConnection, socket.socket | None, http.client.HTTPResponse]:
        host = parts.hostname or ""
        port = _port(parts)
        where = self._where(parts)
        conn: http.client.HTTPConnection
        if parts.scheme.lower() == "https":
            tls = ssl.create_default_context()
            conn = _TLSConnection(host, port, self.remaining(), self._open, tls)
        else:
            conn = _Connection(host, port, self.remaining(), self._open)
        try:
            try:
                conn.connect()
            except EgressRefused as exc:
                raise PackError(
                    "not_permitted", f"http.fetch may not connect to {where}: {exc.reason}"
                ) from None
            except TimeoutError as exc:
                if self.cancelled():
                    raise self._failure(exc, where, "connecting to") from exc
                raise timeout(f"connecting to {where} timed out") from exc
            except OSError as exc:
                raise self._failure(exc, where, "connecting to") from exc
            sock = conn.sock
            target = urlunsplit(("", "", parts.path or "/", parts.query, ""))
            try:
                conn.request(method, target, headers=self._request_headers(same_origin))
                if sock is not None:
                    sock.settimeout(self.remaining())
                response = conn.getresponse()
            except TimeoutError as exc:
                if self.cancelled():
                    raise self._failure(exc, where, "talking to") from exc
                raise timeout(f"{where} did not answer within {self.budget:g}s") from exc
            except (OSError, http.client.HTTPException) as exc:
                raise self._failure(exc, where, "talking to") from exc
        except BaseException:
            conn.close()
            raise
        return conn, sock, response

    def _raise_for_status(self, response: http.client.HTTPResponse, parts: SplitResult) -> None:
        status = response.status
        if status < 400:
            return
        where = self._where(parts)
        said = f"{where} answered HTTP {status}"
        if status in {401, 407}:
            raise auth_failed(f"{said}: the credentials were missing or rejected")
        if status == 403:
            raise auth_failed(f"{said}: access is forbidden with these credentials")
        if status in {404, 410}:
            raise not_found(f"{said}: the resource does not exist")
        if status in {408, 504}:
            raise timeout(f"{said}: the server or a gateway timed out")
        retry_after = parse_retry_after(response.getheader("Retry-After"))
        if status == 429:
            wait = retry_after if retry_after is not None else DEFAULT_RETRY_AFTER
            raise rate_limited(wait, f"{said}: too many requests")
        if status == 503 and retry_after is not None:
            raise rate_limited(retry_after, f"{said}: the service is temporarily unavailable")
        if status >= 500:
            raise network_error(f"{said}: the server failed")
        raise PackError("http_error", f"{said}: the server rejected the request")

    def _read_body(
        self,
        response: http.client.HTTPResponse,
        sock: socket.socket | None,
        method: str,
        parts: SplitResult,
    ) -> bytes:
        if method == "HEAD" or response.status in {204, 304} or response.status < 200:
            return b""
        where = self._where(parts)
        declared = response.getheader("Content-Length")
        if declared is not None and declared.strip().isdigit() and int(declared) > self.max_bytes:
            raise PackError(
                "too_large", f"the body is {int(declared)} bytes, more than {self._limit()}"
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            left = self.remaining()
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.settimeout(left)
            try:
                chunk = response.read1(CHUNK)
            except TimeoutError as exc:
                if self.cancelled():
                    raise self._failure(exc, where, "reading the body from") from exc
                raise timeout(f"{where} sent the body too slowly") from exc
            except (OSError, http.client.HTTPException) as exc:
                raise self._failure(exc, where, "reading the body from") from exc
            if not chunk:
                break
            total += len(chunk)
            if total > self.max_bytes:
                raise PackError("too_large", f"the body is more than {self._limit()}")
            chunks.append(chunk)
        self.remaining()  # a cancelled call's shut socket reads as a clean end: not a body
        if declared is not None and declared.strip().isdigit() and total < int(declared):
            raise network_error(f"{where} closed the connection before the body was complete")
        return b"".join(chunks)

    def _limit(self) -> str:
        if self.capped:
            return (
                f"the server's message limit of {self.max_bytes} bytes (max_bytes is capped by it)"
            )
        return f"max_bytes={self.max_bytes} bytes"

    # -- the result ----------------------------------------------------------------------

    def _result(self, url: str, response: http.client.HTTPResponse, raw: bytes) -> dict[str, Any]:
        headers = _headers(response.getheaders(), self.auth.name)
        ctype = headers.get("content-type", "")
        mime, _, params = ctype.partition(";")
        mime = mime.strip().lower()
        charset = _charset(params)
        out: dict[str, Any] = {
            "url": scrub(self.secrets.text(url)),
            "status": response.status,
            "reason": response.reason or "",
            "headers": headers,
            "bytes": len(raw),
            "body": None,
            "body_format": "none",
        }
        if self.redirects:
            out["redirects"] = [scrub(self.secrets.text(u)) for u in self.redirects]
        if self.method == "HEAD" and not raw:
            return self.secrets.data(out)  # type: ignore[no-any-return]
        # Every form of every known secret leaves the bytes before they are parsed,
        # decoded or base64-encoded: what the pack encodes can no longer carry one.
        raw = self.secrets.raw(raw)
        is_json = mime == "application/json" or mime.endswith("+json")
        parsed: Any = None
        parsed_ok = False
        if is_json or self.schema is not None:
            try:
                parsed = orjson.loads(raw)
                parsed_ok = True
            except orjson.JSONDecodeError:
                parsed_ok = False
        if self.schema is not None and parsed_ok:
            # The check runs natively, holding the GIL: bounded before it starts.
            costly = self.schema.cost_fault(parsed, len(raw))
            if costly is not None:
                raise PackError("too_large", f"the body is too large for json_schema: {costly}")
        if self.schema is not None:
            self._validate(out, parsed, parsed_ok)
        if parsed_ok:
            out["body"], out["body_format"] = parsed, "json"
        else:
            out["body"], out["body_format"] = _decode(raw, mime, charset)
        return self.secrets.data(out)  # type: ignore[no-any-return]

    def _validate(self, out: dict[str, Any], parsed: Any, parsed_ok: bool) -> None:
        assert self.schema is not None
        partial = {k: out[k] for k in ("url", "status", "headers", "bytes")}
        if not parsed_ok:
            raise schema_mismatch(
                self.secrets.data(partial),
                "the body is not JSON, so it cannot match json_schema",
                [FieldViolation("/body", "not valid JSON")],
            )
        if self.schema.is_valid(parsed):
            return
        if isinstance(parsed, dict):
            fields, violations = self.schema.partial(parsed)
            partial["body"] = fields
        else:
            violations = self.schema.violations(parsed)
        raise schema_mismatch(
            self.secrets.data(partial),
            "the JSON body did not match json_schema",
            [
                FieldViolation("/body" + v.field, self.secrets.text(v.description))
                for v in violations
            ],
        )


def _headers(items: Iterable[tuple[str, str]], credential_header: str | None) -> dict[str, str]:
    hidden = set(SENSITIVE_HEADERS)
    if credential_header:
        hidden.add(credential_header.lower())
    out: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        if key in hidden:
            continue
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _charset(params: str) -> str | None:
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "charset" and value:
            return value.strip().strip('"').lower()
    return None


def _decode(raw: bytes, mime: str, charset: str | None) -> tuple[str, str]:
    """The body as text when it is text (declared or valid UTF-8), else base64."""
    textual = mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith("+xml")
    if textual or charset or not mime:
        codec = charset if _known(charset) else "utf-8"
        try:
            return raw.decode(codec or "utf-8"), "text"
        except UnicodeError:
            if textual or charset:
                return raw.decode(codec or "utf-8", "replace"), "text"
    return base64.b64encode(raw).decode("ascii"), "base64"


#: The charsets a body is decoded with: the WHATWG Encoding Standard's (what a browser
#: honours), plus ASCII, Latin-1 and UTF-32, each a linear-time decoder in C or a charmap.
#: Any other label (``punycode``: quadratic, 4 MB would take minutes of a thread; ``zlib``,
#: ``hex``: not text at all) is read as UTF-8.
_TEXT_CODECS: Final = frozenset(
    codecs.lookup(label).name
    for label in (
        "utf-8",
        "utf-16",
        "utf-16-be",
        "utf-16-le",
        "utf-32",
        "ascii",
        "latin-1",
        "ibm866",
        *(f"iso-8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)),
        "koi8-r",
        "koi8-u",
        "mac-roman",
        "mac-cyrillic",
        *(f"cp{n}" for n in (874, 1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258)),
        "gbk",
        "gb18030",
        "big5",
        "euc-jp",
        "iso-2022-jp",
        "shift_jis",
        "euc-kr",
    )
)


def _known(charset: str | None) -> bool:
    if charset is None:
        return False
    try:
        return codecs.lookup(charset).name in _TEXT_CODECS
    except LookupError:
        return False


def _network_failure(exc: BaseException, where: str, doing: str) -> PackError:
    """A ``network_error`` with a fixed message for a socket-level failure."""
    if isinstance(exc, socket.gaierror):
        return network_error(f"the host name in {where} could not be resolved")
    if isinstance(exc, ConnectionRefusedError):
        return network_error(f"{where} refused the connection")
    if isinstance(exc, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return network_error(f"{where} reset or closed the connection")
    if isinstance(exc, ssl.SSLError):
        return network_error(f"the TLS handshake with {where} failed")
    if isinstance(exc, http.client.IncompleteRead):
        return network_error(f"{where} closed the connection before the body was complete")
    if isinstance(exc, http.client.HTTPException):
        return network_error(f"{where} did not answer with valid HTTP")
    return network_error(f"{doing} {where} failed at the network level")


def fetch(
    doc: Mapping[str, Any],
    budget: float,
    *,
    egress: EgressPolicy | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    body_limit: int = DEFAULT_MESSAGE_LIMIT,
) -> dict[str, Any]:
    """Fetch ``doc["url"]`` within ``budget`` seconds; the output document or a PackError.

    ``egress``: where it may connect (default: public addresses only); ``cancelled``: polled
    so a cancelled call's socket is shut; ``body_limit``: the cap on ``max_bytes``.
    """
    return Fetch(doc, budget, egress=egress, cancelled=cancelled, body_limit=body_limit).run()
