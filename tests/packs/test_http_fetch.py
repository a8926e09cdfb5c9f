"""http.fetch against real HTTP servers on 127.0.0.1 (and real socket failures)."""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest
from pack_helpers import Call, assert_error, assert_no_secrets, granted, make_call
from pack_servers import (
    LOOPBACK,
    UNRESOLVABLE_HOST,
    BacklogFull,
    HTTPServerThread,
    QuietHandler,
    RawTCPServer,
    free_port,
)

import packs.http_fetch as http_fetch
from control_plane._kernel.reach import Grant

PACK = "http.fetch"

#: Declared code -> the tests in this file that provoke it against a real server or socket.
#: internal_error is left out: every failure path of the client is typed, so no server
#: behaviour reaches it (the runtime's own tests cover the fallback).
CODE_TESTS: dict[str, tuple[str, ...]] = {
    "auth_failed": ("test_auth_failed", "test_wrong_bearer_is_auth_failed"),
    "not_found": ("test_not_found",),
    "rate_limited": (
        "test_rate_limited_with_delta_seconds",
        "test_rate_limited_with_http_date",
        "test_503_with_retry_after_is_rate_limited",
        "test_rate_limited_without_retry_after_gets_a_default",
    ),
    "timeout": (
        "test_read_timeout",
        "test_slow_body_hits_the_overall_deadline",
        "test_connect_timeout",
        "test_call_deadline_caps_the_fetch",
        "test_408_504_are_timeout",
    ),
    "network_error": (
        "test_connection_refused_is_network_error",
        "test_connection_reset_is_network_error",
        "test_dns_failure_is_network_error",
        "test_garbage_and_truncated_responses_are_network_error",
        "test_5xx_is_network_error",
    ),
    "schema_mismatch": (
        "test_schema_mismatch_is_partial",
        "test_schema_mismatch_on_non_object_and_non_json",
    ),
    "too_large": ("test_too_large",),
    "too_many_redirects": ("test_too_many_redirects",),
    "http_error": ("test_http_error_for_other_4xx_and_bad_redirects",),
    "invalid_json_schema": ("test_invalid_json_schema_fetches_nothing",),
    "not_permitted": ("test_not_permitted_by_default_for_loopback",),
}
TOKEN = "tok-PLANTED-bearer-91c2e7"
HEADER_SECRET = "hdr-PLANTED-apikey-5d8b01"
URL_PASSWORD = "pw-PLANTED-url-a4f19e"
DOC_JSON = {"name": "demo", "count": 3, "tags": ["a", "b"]}


class Routes(QuietHandler):
    """Every behaviour the tests need, one path each."""

    other_origin = ""  # set to the second server's base URL

    def do_GET(self) -> None:
        self.route()

    def do_HEAD(self) -> None:
        self.route()

    def send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def route(self) -> None:
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        segments = path.strip("/").split("/")
        if path == "/json":
            self.send(200, orjson.dumps(DOC_JSON), {"Content-Type": "application/json"})
        elif path == "/text":
            self.send(200, "héllo\n".encode(), {"Content-Type": "text/plain; charset=utf-8"})
        elif path == "/binary":
            self.send(200, bytes(range(256)), {"Content-Type": "application/octet-stream"})
        elif path == "/echo":
            seen = {k.lower(): v for k, v in self.headers.items()}
            self.send(
                200,
                orjson.dumps({"headers": seen}),
                {
                    "Content-Type": "application/json",
                    "Set-Cookie": f"session={TOKEN}",
                    "X-Echo-Auth": seen.get("authorization", "none"),
                    "X-Trace": "ok",
                },
            )
        elif path == "/auth":
            if self.headers.get("Authorization") == f"Bearer {TOKEN}":
                self.send(200, b'{"ok": true}', {"Content-Type": "application/json"})
            else:
                self.send(401, b"who are you", {"WWW-Authenticate": 'Bearer realm="t"'})
        elif segments[0] == "status":
            headers = {}
            if "retry_after" in query:
                headers["Retry-After"] = query["retry_after"][0]
            self.send(int(segments[1]), b"raw downstream body " + TOKEN.encode(), headers)
        elif path == "/retry-date":  # ?status=503 for the 503 form
            when = email.utils.formatdate(time.time() + 120, usegmt=True)
            status = int(query.get("status", ["429"])[0])
            self.send(status, b"slow down", {"Retry-After": when})
        elif segments[0] == "redirect":
            left = int(segments[1])
            target = "/json" if left <= 1 else f"/redirect/{left - 1}"  # N hops in all
            self.send(302, b"", {"Location": target})
        elif path == "/loop":
            self.send(302, b"", {"Location": "/loop"})
        elif path == "/redirect-nolocation":
            self.send(302, b"")
        elif path == "/redirect-other-origin":
            self.send(302, b"", {"Location": self.other_origin + "/echo"})
        elif path == "/see-other":
            self.send(303, b"", {"Location": "/json"})
        elif path == "/slow":
            time.sleep(3)
            self.send(200, b"late")
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
        elif path == "/big":
            self.send(200, b"x" * 200_000, {"Content-Type": "text/plain"})
        elif path == "/big-chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(20):
                chunk = b"y" * 10_000
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/truncated":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"only ten b")
            self.close_connection = True
        elif path == "/array":
            self.send(200, b"[1, 2, 3]", {"Content-Type": "application/json"})
        else:
            self.send(404, b"no such route")


class Other(QuietHandler):
    """A second origin: echoes the headers it received."""

    def do_GET(self) -> None:
        seen = {k.lower(): v for k, v in self.headers.items()}
        body = orjson.dumps({"headers": seen})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[HTTPServerThread, HTTPServerThread]]:
    other = HTTPServerThread(Other)
    handler: type[BaseHTTPRequestHandler] = type(
        "BoundRoutes", (Routes,), {"other_origin": other.url("").rstrip("/")}
    )
    main = HTTPServerThread(handler)
    yield main, other
    main.close()
    other.close()


@pytest.fixture(scope="module")
def server(servers: tuple[HTTPServerThread, HTTPServerThread]) -> HTTPServerThread:
    return servers[0]


@pytest.fixture(scope="module")
def call() -> Iterator[Call]:
    # The test servers are on loopback, which the default grant refuses: grant it, as an
    # operator would (tests/packs/test_http_fetch_reach.py tests the refusals).
    with granted({PACK: Grant(egress=("public", "loopback"))}):
        invoker, call_ = make_call(http_fetch)
        yield call_
        invoker.close()


def fetch(call: Call, url: str, **doc: Any) -> Any:
    return call(PACK, {"url": url, **doc})


# -- success ------------------------------------------------------------------------------


def test_get_json(call: Call, server: HTTPServerThread) -> None:
    outcome = fetch(call, server.url("/json"))
    assert outcome.ok, outcome.to_dict()
    result = outcome.result
    assert result["status"] == 200
    assert result["body"] == DOC_JSON
    assert result["body_format"] == "json"
    assert result["headers"]["content-type"] == "application/json"
    assert result["bytes"] == len(orjson.dumps(DOC_JSON))
    assert result["url"] == server.url("/json")


def test_head_has_no_body(call: Call, server: HTTPServerThread) -> None:
    result = fetch(call, server.url("/json"), method="HEAD").result
    assert result["status"] == 200
    assert result["body"] is None and result["body_format"] == "none"


def test_text_and_binary_bodies(call: Call, server: HTTPServerThread) -> None:
    text = fetch(call, server.url("/text")).result
    assert text["body"] == "héllo\n" and text["body_format"] == "text"
    binary = fetch(call, server.url("/binary")).result
    assert binary["body_format"] == "base64" and binary["bytes"] == 256


def test_redirects_followed_within_the_limit(call: Call, server: HTTPServerThread) -> None:
    result = fetch(call, server.url("/redirect/3"), max_redirects=3).result
    assert result["status"] == 200 and result["body"] == DOC_JSON
    assert len(result["redirects"]) == 3
    assert result["url"] == server.url("/json")
    see_other = fetch(call, server.url("/see-other")).result
    assert see_other["body"] == DOC_JSON


def test_redirect_not_followed_when_asked(call: Call, server: HTTPServerThread) -> None:
    result = fetch(call, server.url("/redirect/1"), follow_redirects=False).result
    assert result["status"] == 302
    assert result["headers"]["location"] == "/json"


def test_caller_headers_are_sent(call: Call, server: HTTPServerThread) -> None:
    outcome = fetch(call, server.url("/echo"), headers={"X-Request-Tag": "t-42", "Accept": "a/b"})
    assert outcome.ok
    seen = outcome.result["body"]["headers"]
    assert seen["x-request-tag"] == "t-42" and seen["accept"] == "a/b"


def test_schema_that_matches(call: Call, server: HTTPServerThread) -> None:
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}}
    assert fetch(call, server.url("/json"), json_schema=schema).ok


# -- credentials --------------------------------------------------------------------------


def test_bearer_credential_is_sent_and_never_echoed(call: Call, server: HTTPServerThread) -> None:
    outcome = fetch(call, server.url("/auth"), credential={"bearer": TOKEN})
    assert outcome.ok and outcome.result["body"] == {"ok": True}
    echo = fetch(call, server.url("/echo"), credential={"bearer": TOKEN})
    assert echo.ok
    # The server reflected the token in its body and headers; none of it comes back.
    assert echo.result["body"]["headers"]["authorization"] == "Bearer [REDACTED]"
    assert "set-cookie" not in echo.result["headers"]
    assert echo.result["headers"]["x-trace"] == "ok"
    assert_no_secrets(echo, TOKEN)


def test_custom_header_credential(call: Call, server: HTTPServerThread) -> None:
    outcome = fetch(
        call,
        server.url("/echo"),
        credential={"header": {"name": "X-Api-Key", "value": HEADER_SECRET}},
    )
    assert outcome.ok
    assert outcome.result["body"]["headers"]["x-api-key"] == "[REDACTED]"
    assert_no_secrets(outcome, HEADER_SECRET)


def test_url_credentials_become_basic_auth_and_leave_the_url(
    call: Call, server: HTTPServerThread
) -> None:
    url = server.url("/echo").replace("://", f"://bob:{URL_PASSWORD}@")
    outcome = fetch(call, url)
    assert outcome.ok
    assert outcome.result["url"] == server.url("/echo")
    assert outcome.result["body"]["headers"]["authorization"] == "Basic [REDACTED]"
    assert_no_secrets(outcome, URL_PASSWORD)
    failed = fetch(call, server.url("/status/401").replace("://", f"://bob:{URL_PASSWORD}@"))
    assert_error(failed, "auth_failed")
    assert_no_secrets(failed, URL_PASSWORD, TOKEN)


def test_credential_dropped_on_cross_origin_redirect(
    call: Call, servers: tuple[HTTPServerThread, HTTPServerThread]
) -> None:
    main, other = servers
    outcome = fetch(call, main.url("/redirect-other-origin"), credential={"bearer": TOKEN})
    assert outcome.ok
    assert outcome.result["url"] == other.url("/echo")
    assert "authorization" not in outcome.result["body"]["headers"]


# -- every declared code --------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failed(call: Call, server: HTTPServerThread, status: int) -> None:
    outcome = fetch(call, server.url(f"/status/{status}"), credential={"bearer": TOKEN})
    error = assert_error(outcome, "auth_failed")
    assert str(status) in error["message"]
    assert error["retryable"] is False
    assert_no_secrets(outcome, TOKEN)  # nor the raw body, which carries it


def test_wrong_bearer_is_auth_failed(call: Call, server: HTTPServerThread) -> None:
    assert_error(
        fetch(call, server.url("/auth"), credential={"bearer": "wrong-token"}), "auth_failed"
    )


@pytest.mark.parametrize("status", [404, 410])
def test_not_found(call: Call, server: HTTPServerThread, status: int) -> None:
    assert_error(fetch(call, server.url(f"/status/{status}")), "not_found")


def test_rate_limited_with_delta_seconds(call: Call, server: HTTPServerThread) -> None:
    error = assert_error(fetch(call, server.url("/status/429?retry_after=7")), "rate_limited")
    assert error["retry_after"] == 7
    assert error["retryable"] is True


@pytest.mark.parametrize("status", [429, 503])
def test_rate_limited_with_http_date(call: Call, server: HTTPServerThread, status: int) -> None:
    error = assert_error(fetch(call, server.url(f"/retry-date?status={status}")), "rate_limited")
    assert 100 <= error["retry_after"] <= 121
    assert error["retryable"] is True


def test_rate_limited_without_retry_after_gets_a_default(
    call: Call, server: HTTPServerThread
) -> None:
    error = assert_error(fetch(call, server.url("/status/429")), "rate_limited")
    assert error["retry_after"] == 1.0


def test_503_with_retry_after_is_rate_limited(call: Call, server: HTTPServerThread) -> None:
    error = assert_error(fetch(call, server.url("/status/503?retry_after=5")), "rate_limited")
    assert error["retry_after"] == 5


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_network_error(call: Call, server: HTTPServerThread, status: int) -> None:
    assert_error(fetch(call, server.url(f"/status/{status}")), "network_error")


@pytest.mark.parametrize("status", [408, 504])
def test_408_504_are_timeout(call: Call, server: HTTPServerThread, status: int) -> None:
    assert_error(fetch(call, server.url(f"/status/{status}")), "timeout")


def test_read_timeout(call: Call, server: HTTPServerThread) -> None:
    started = time.monotonic()
    error = assert_error(fetch(call, server.url("/slow"), timeout=0.5), "timeout")
    assert time.monotonic() - started < 2.5
    assert error["retryable"] is True


def test_slow_body_hits_the_overall_deadline(call: Call, server: HTTPServerThread) -> None:
    started = time.monotonic()
    assert_error(fetch(call, server.url("/drip"), timeout=0.6), "timeout")
    assert time.monotonic() - started < 2.5


def test_connect_timeout(call: Call) -> None:
    with BacklogFull() as full:
        started = time.monotonic()
        error = assert_error(fetch(call, f"http://{LOOPBACK}:{full.port}/", timeout=0.5), "timeout")
        assert "connecting" in error["message"]
        assert time.monotonic() - started < 2.5


def test_call_deadline_caps_the_fetch(call: Call, server: HTTPServerThread) -> None:
    started = time.monotonic()
    assert_error(call(PACK, {"url": server.url("/slow")}, timeout=0.5), "timeout")
    assert time.monotonic() - started < 2.5


def test_connection_refused_is_network_error(call: Call) -> None:
    error = assert_error(fetch(call, f"http://{LOOPBACK}:{free_port()}/"), "network_error")
    assert "refused" in error["message"]


def test_connection_reset_is_network_error(call: Call) -> None:
    with RawTCPServer("reset") as reset:
        error = assert_error(fetch(call, f"http://{LOOPBACK}:{reset.port}/"), "network_error")
    assert "reset" in error["message"]


def test_dns_failure_is_network_error(call: Call) -> None:
    # Longer than 255 octets: the resolver refuses locally, no DNS packet leaves.
    error = assert_error(
        fetch(call, f"http://{UNRESOLVABLE_HOST}/x", credential={"bearer": TOKEN}), "network_error"
    )
    assert "resolved" in error["message"]


def test_garbage_and_truncated_responses_are_network_error(
    call: Call, server: HTTPServerThread
) -> None:
    with RawTCPServer("garbage") as garbage:
        assert_error(fetch(call, f"http://{LOOPBACK}:{garbage.port}/"), "network_error")
    assert_error(fetch(call, server.url("/truncated")), "network_error")


def test_schema_mismatch_is_partial(call: Call, server: HTTPServerThread) -> None:
    schema = {
        "type": "object",
        "required": ["name", "count"],
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    error = assert_error(fetch(call, server.url("/json"), json_schema=schema), "schema_mismatch")
    assert error["partial"] is True
    partial = error["partial_result"]
    assert partial["body"] == {"name": "demo", "tags": ["a", "b"]}  # count broke the schema
    assert partial["status"] == 200
    assert [v["field"] for v in error["violations"]] == ["/body/count"]


def test_schema_mismatch_on_non_object_and_non_json(call: Call, server: HTTPServerThread) -> None:
    schema = {"type": "object"}
    error = assert_error(fetch(call, server.url("/array"), json_schema=schema), "schema_mismatch")
    assert error["partial"] is True and "body" not in error["partial_result"]
    error = assert_error(fetch(call, server.url("/text"), json_schema=schema), "schema_mismatch")
    assert error["violations"][0]["field"] == "/body"


def test_too_large(call: Call, server: HTTPServerThread) -> None:
    error = assert_error(fetch(call, server.url("/big"), max_bytes=1000), "too_large")
    assert error["retryable"] is False
    assert_error(fetch(call, server.url("/big-chunked"), max_bytes=1000), "too_large")
    assert fetch(call, server.url("/big-chunked"), max_bytes=300_000).result["bytes"] == 200_000


def test_too_many_redirects(call: Call, server: HTTPServerThread) -> None:
    assert_error(fetch(call, server.url("/redirect/3"), max_redirects=2), "too_many_redirects")
    assert_error(fetch(call, server.url("/loop")), "too_many_redirects")


def test_http_error_for_other_4xx_and_bad_redirects(call: Call, server: HTTPServerThread) -> None:
    error = assert_error(fetch(call, server.url("/status/400")), "http_error")
    assert "400" in error["message"]
    assert_error(fetch(call, server.url("/status/422")), "http_error")
    assert_error(fetch(call, server.url("/redirect-nolocation")), "http_error")


def test_invalid_json_schema_fetches_nothing(call: Call) -> None:
    # Port from free_port(): were anything fetched, this would be network_error.
    url = f"http://{LOOPBACK}:{free_port()}/"
    assert_error(fetch(call, url, json_schema={"type": 12}), "invalid_json_schema")
    remote_ref = {"$ref": "https://schemas.example.test/thing.json"}
    assert_error(fetch(call, url, json_schema=remote_ref), "invalid_json_schema")


def test_not_permitted_by_default_for_loopback(
    server: HTTPServerThread,
) -> None:
    invoker, call_ = make_call(http_fetch)
    try:
        with granted({PACK: None}):  # no grant: the declaration, public addresses only
            error = assert_error(fetch(call_, server.url("/json")), "not_permitted")
    finally:
        invoker.close()
    assert error["retryable"] is False and "loopback" in error["message"]


def test_planted_secrets_never_appear_in_any_failure(
    call: Call, server: HTTPServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url_with_password = f"http://bob:{URL_PASSWORD}@{LOOPBACK}:{free_port()}/x?token={TOKEN}"
    for outcome in (
        fetch(call, url_with_password, credential={"bearer": TOKEN}),
        fetch(
            call,
            server.url("/status/500"),
            credential={"header": {"name": "X-K", "value": HEADER_SECRET}},
        ),
        fetch(call, server.url("/status/429"), credential={"bearer": TOKEN}),
        fetch(
            call,
            server.url("/echo").replace("://", f"://u:{URL_PASSWORD}@"),
            json_schema={"type": "object", "properties": {"headers": {"type": "string"}}},
            credential={"bearer": TOKEN},
        ),
    ):
        assert outcome.error is not None
        assert_no_secrets(outcome, TOKEN, URL_PASSWORD, HEADER_SECRET)
    for secret in (TOKEN, URL_PASSWORD, HEADER_SECRET):
        assert secret not in caplog.text  # nor in any log line


def test_every_declared_code_has_a_provoking_test() -> None:
    declared = set(
        http_fetch.PACK.output_schema["properties"]["error"]["properties"]["code"]["enum"]
    )
    assert set(CODE_TESTS) == declared
    for names in CODE_TESTS.values():
        for name in names:
            assert callable(globals()[name]), name
