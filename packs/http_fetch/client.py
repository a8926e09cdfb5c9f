"""The HTTP client behind http.fetch: stdlib ``http.client``, one deadline, typed failures.

Every failure leaves as a :class:`~control_plane.core.errors.PackError` with a fixed message
naming at most the host and port: never the path, the query, a header or a body. The
credential (input ``credential`` or ``user:password@`` in the URL) is sent as a header,
dropped when a redirect leaves the origin, and every literal copy of it is replaced by
``[REDACTED]`` in whatever the pack returns.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import socket
import ssl
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
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
    CompiledSchema,
    check_schema,
    parse_retry_after,
    scrub,
)
from packs.credentials import basic_header, credential_header

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_TIMEOUT", "Fetch", "fetch"]

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_REDIRECTS = 5
USER_AGENT = "capability-packs-http.fetch/1.0"
REDACTED = "[REDACTED]"
CHUNK = 64 * 1024

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


@dataclass
class _Auth:
    """The credential as one header, plus every literal that must never be returned."""

    name: str | None = None
    value: str | None = None
    secrets: list[str] = field(default_factory=list)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, REDACTED)
        return text

    def redact_data(self, value: Any) -> Any:
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(str(k)): self.redact_data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact_data(v) for v in value]
        return value


def _secrets_of(value: str, password: str | None) -> list[str]:
    """What to scrub besides the patterns: the header value, its token, the password."""
    token = value.split(" ", 1)[1] if value.startswith(("Basic ", "Bearer ")) else value
    return [s for s in (token, password) if s and len(s) >= 3]


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


def _non_local_refs(schema: Any) -> bool:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in {"$ref", "$dynamicRef", "$recursiveRef"} and not (
                    isinstance(value, str) and value.startswith("#")
                ):
                    return True
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return False


def compile_json_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """The caller's schema compiled, or ``invalid_json_schema`` (nothing is fetched)."""
    if _non_local_refs(schema):
        raise PackError(
            "invalid_json_schema", "json_schema may only use local $ref (starting with #)"
        )
    fault = check_schema(schema)
    if fault is not None:
        raise PackError("invalid_json_schema", "json_schema is not a valid JSON Schema")
    try:
        return CompiledSchema(schema)
    except ValueError:
        raise PackError("invalid_json_schema", "json_schema does not compile") from None


class Fetch:
    """One fetch: a URL, a deadline, the redirects followed so far."""

    def __init__(self, doc: Mapping[str, Any], budget: float) -> None:
        url, userinfo = _strip_userinfo(str(doc["url"]))
        self.url = url
        self.auth = _auth(doc.get("credential"), userinfo)
        self.method = str(doc.get("method", "GET"))
        self.headers = {str(k): str(v) for k, v in (doc.get("headers") or {}).items()}
        self.budget = budget
        self.deadline = time.monotonic() + budget
        self.max_bytes = int(doc.get("max_bytes", DEFAULT_MAX_BYTES))
        self.max_redirects = int(doc.get("max_redirects", DEFAULT_MAX_REDIRECTS))
        self.follow = bool(doc.get("follow_redirects", True))
        self.redirects: list[str] = []
        schema = doc.get("json_schema")
        self.schema = compile_json_schema(schema) if isinstance(schema, Mapping) else None

    # -- the request loop ---------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        method = self.method
        url = self.url
        send_auth = self.auth.name is not None
        first_origin = _origin(urlsplit(url))
        while True:
            parts = urlsplit(url)
            if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
                raise PackError("http_error", "the URL is not a usable http(s) URL")
            conn, sock, response = self._request(method, parts, send_auth)
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
                        send_auth = False  # never hand the credential to another origin
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
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise timeout(f"the fetch did not finish within {self.budget:g}s")
        return left

    def _where(self, parts: SplitResult) -> str:
        host = parts.hostname or "?"
        if ":" in host:
            host = f"[{host}]"
        return f"{host}:{_port(parts)}"

    def _request(
        self, method: str, parts: SplitResult, send_auth: bool
    ) -> tuple[http.client.HTTPConnection, socket.socket | None, http.client.HTTPResponse]:
        host = parts.hostname or ""
        port = _port(parts)
        where = self._where(parts)
        conn: http.client.HTTPConnection
        if parts.scheme.lower() == "https":
            conn = http.client.HTTPSConnection(
                host, port, timeout=self.remaining(), context=ssl.create_default_context()
            )
        else:
            conn = http.client.HTTPConnection(host, port, timeout=self.remaining())
        try:
            try:
                conn.connect()
            except TimeoutError as exc:
                raise timeout(f"connecting to {where} timed out") from exc
            except OSError as exc:
                raise _network_failure(exc, where, "connecting to") from exc
            sock = conn.sock
            target = urlunsplit(("", "", parts.path or "/", parts.query, ""))
            headers = {"User-Agent": USER_AGENT, "Accept": "*/*", **self.headers}
            if send_auth and self.auth.name and self.auth.value is not None:
                headers[self.auth.name] = self.auth.value
            try:
                conn.request(method, target, headers=headers)
                if sock is not None:
                    sock.settimeout(self.remaining())
                response = conn.getresponse()
            except TimeoutError as exc:
                raise timeout(f"{where} did not answer within {self.budget:g}s") from exc
            except (OSError, http.client.HTTPException) as exc:
                raise _network_failure(exc, where, "talking to") from exc
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
                "too_large",
                f"the body is {int(declared)} bytes, more than max_bytes={self.max_bytes}",
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
                raise timeout(f"{where} sent the body too slowly") from exc
            except (OSError, http.client.HTTPException) as exc:
                raise _network_failure(exc, where, "reading the body from") from exc
            if not chunk:
                break
            total += len(chunk)
            if total > self.max_bytes:
                raise PackError(
                    "too_large", f"the body is more than max_bytes={self.max_bytes} bytes"
                )
            chunks.append(chunk)
        if declared is not None and declared.strip().isdigit() and total < int(declared):
            raise network_error(f"{where} closed the connection before the body was complete")
        return b"".join(chunks)

    # -- the result ----------------------------------------------------------------------

    def _result(self, url: str, response: http.client.HTTPResponse, raw: bytes) -> dict[str, Any]:
        headers = _headers(response.getheaders(), self.auth.name)
        ctype = headers.get("content-type", "")
        mime, _, params = ctype.partition(";")
        mime = mime.strip().lower()
        charset = _charset(params)
        out: dict[str, Any] = {
            "url": scrub(self.auth.redact(url)),
            "status": response.status,
            "reason": self.auth.redact(response.reason or ""),
            "headers": headers,
            "bytes": len(raw),
            "body": None,
            "body_format": "none",
        }
        if self.redirects:
            out["redirects"] = [scrub(self.auth.redact(u)) for u in self.redirects]
        if self.method == "HEAD" and not raw:
            return self.auth.redact_data(out)  # type: ignore[no-any-return]
        is_json = mime == "application/json" or mime.endswith("+json")
        parsed: Any = None
        parsed_ok = False
        if is_json or self.schema is not None:
            try:
                parsed = orjson.loads(raw)
                parsed_ok = True
            except orjson.JSONDecodeError:
                parsed_ok = False
        if self.schema is not None:
            self._validate(out, parsed, parsed_ok)
        if parsed_ok:
            out["body"], out["body_format"] = parsed, "json"
        else:
            out["body"], out["body_format"] = _decode(raw, mime, charset)
        return self.auth.redact_data(out)  # type: ignore[no-any-return]

    def _validate(self, out: dict[str, Any], parsed: Any, parsed_ok: bool) -> None:
        assert self.schema is not None
        partial = {k: out[k] for k in ("url", "status", "headers", "bytes")}
        if not parsed_ok:
            raise schema_mismatch(
                self.auth.redact_data(partial),
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
            self.auth.redact_data(partial),
            "the JSON body did not match json_schema",
            [
                FieldViolation("/body" + v.field, self.auth.redact(v.description))
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
        except UnicodeDecodeError:
            if textual or charset:
                return raw.decode(codec or "utf-8", "replace"), "text"
    return base64.b64encode(raw).decode("ascii"), "base64"


def _known(charset: str | None) -> bool:
    if charset is None:
        return False
    try:
        b"".decode(charset)
    except LookupError:
        return False
    return True


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


def fetch(doc: Mapping[str, Any], budget: float) -> dict[str, Any]:
    """Fetch ``doc["url"]`` within ``budget`` seconds; the output document or a PackError."""
    return Fetch(doc, budget).run()
