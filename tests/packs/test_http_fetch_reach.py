"""http.fetch in the hands of an untrusted caller: each attack of issues 33 and 34.

Against a real ``packctl serve`` and real HTTP servers on 127.0.0.1. Addresses beyond
loopback (link-local, metadata, private) are never contacted: the pack's resolver is a
table and its connector a spy that records every attempt, so the refusal is shown to
happen before any connect.
"""

from __future__ import annotations

import base64
import concurrent.futures
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import quote

import grpc
import orjson
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from pack_helpers import GRANTS, assert_error, assert_no_secrets, granted, make_call
from pack_servers import LOOPBACK, HTTPServerThread, QuietHandler, RawTCPServer
from raw_wire import Received, Serve, invoke

import packs.http_fetch as http_fetch
import packs.http_fetch.client as fetch_client
from control_plane._kernel.reach import Grant, Grants
from control_plane.v1 import control_plane_pb2 as pb

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

PACK = "http.fetch"
TOKEN = "tok-PLANTED-reach-3f9a2c71"
API_KEY = "key-PLANTED-reach-a81d0e55"


class Counting(QuietHandler):
    """Counts requests; ``/redirect?to=URL`` redirects; ``/echo`` reflects the headers;
    ``/binary-echo`` hides them in a binary body, raw, base64 and percent-encoded."""

    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        seen = {k.lower(): v for k, v in self.headers.items()}
        if self.path.startswith("/redirect?to="):
            self.send(302, b"", {"Location": self.path.split("=", 1)[1]})
        elif self.path == "/echo":
            self.send(200, orjson.dumps({"headers": seen}), {"Content-Type": "application/json"})
        elif self.path == "/binary-echo":
            reflected = "\n".join(f"{k}: {v}" for k, v in seen.items()).encode()
            body = (
                b"\x00\xff\xfe"
                + reflected
                + b"\x01"
                + base64.b64encode(b"x" + reflected)  # at an odd alignment
                + b"\x02"
                + base64.urlsafe_b64encode(reflected)
                + b"\x03"
                + quote(reflected.decode(), safe="").encode()
            )
            self.send(200, body, {"Content-Type": "application/octet-stream"})
        elif self.path == "/aaa":
            # Distinct strings: a backtracking engine spends ~0.1 s on each, GIL held.
            doc = {"items": ["a" * (26 + i % 8) + "!" * (1 + i // 8) for i in range(120)]}
            self.send(200, orjson.dumps(doc), {"Content-Type": "application/json"})
        elif self.path == "/big":
            self.send(200, b"z" * (6 * 1024 * 1024), {"Content-Type": "text/plain"})
        elif self.path == "/huge":
            self.send(200, b"z" * (20 * 1024 * 1024), {"Content-Type": "text/plain"})
        else:
            self.send(200, b'{"ok": true}', {"Content-Type": "application/json"})

    def send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def counting_server() -> tuple[HTTPServerThread, list[str]]:
    hits: list[str] = []
    handler: type[BaseHTTPRequestHandler] = type("Bound", (Counting,), {"hits": hits})
    return HTTPServerThread(handler), hits


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[HTTPServerThread, list[str], HTTPServerThread, list[str]]]:
    first, first_hits = counting_server()
    second, second_hits = counting_server()
    yield first, first_hits, second, second_hits
    first.close()
    second.close()


def serve(tmp_path: Path, egress: str | None, *args: str) -> Serve:
    """``packctl serve`` with http.fetch granted ``egress`` (``None``: its declaration)."""
    grant = () if egress is None else ("--grant", f"{PACK}:egress={egress}")
    return Serve(tmp_path / "incidents.db", *grant, *args)


def fetch(server: Serve, doc: dict[str, Any], timeout: float = 30) -> Received:
    return invoke(server.channel, PACK, doc, timeout=timeout)


def refused(received: Received) -> None:
    assert received.code == "not_permitted", (received.status, received.message)
    assert received.metadata.get("retryable") == "false"
    # "Not permitted: do not retry" is what a gRPC caller reads in PERMISSION_DENIED.
    assert received.status == grpc.StatusCode.PERMISSION_DENIED, received.status


# -- SSRF: loopback under every spelling, and through a redirect ------------------------------


def test_loopback_is_refused_under_every_spelling(tmp_path: Path, servers: Any) -> None:
    first, hits, _, _ = servers
    port = first.port
    spellings = [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "0.0.0.0",
        "2130706433",
        "0177.0.0.1",
        "0x7f.0.0.1",
        "127.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::]",
    ]
    before = len(hits)
    with serve(tmp_path, None) as server:
        for host in spellings:
            refused(fetch(server, {"url": f"http://{host}:{port}/secret"}))
    assert len(hits) == before  # nothing reached the server


def test_redirect_from_a_granted_origin_to_loopback_is_refused(
    tmp_path: Path, servers: Any
) -> None:
    first, _, second, second_hits = servers
    # Granted: exactly the first server's port on loopback; the second is off limits.
    with serve(tmp_path, f"public,loopback:{first.port}") as server:
        assert fetch(server, {"url": first.url("/plain")}).code == "ok"
        before = len(second_hits)
        for target in (second.url("/admin"), f"http://localhost:{second.port}/admin"):
            received = fetch(server, {"url": first.url(f"/redirect?to={target}")})
            refused(received)
        assert len(second_hits) == before


# -- SSRF: metadata, link-local, private: decided before any connect ---------------------------


class Spy:
    """The pack's connector in these tests: records every attempt, connects only loopback."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def __call__(self, address: Any, port: int, timeout: float) -> Any:
        self.attempts.append(str(address))
        assert str(address) == LOOPBACK, f"a connect to {address} was attempted"
        return fetch_client.tcp_connector(address, port, timeout)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    import ipaddress

    table = {
        "imds.test": ["169.254.169.254"],
        "imds6.test": ["fd00:ec2::254"],
        "rebind.test": ["10.0.0.7", "127.0.0.1"],
    }

    def resolver(host: str, port: int) -> list[Any]:
        if host not in table:  # localhost and the like: /etc/hosts, no packet leaves
            return fetch_client.system_resolver(host, port)
        return [ipaddress.ip_address(a) for a in table[host]]

    connector = Spy()
    monkeypatch.setattr(fetch_client, "RESOLVER", resolver)
    monkeypatch.setattr(fetch_client, "CONNECTOR", connector)
    return connector


GrantEgress = Callable[..., None]


@pytest.fixture
def grant_egress() -> Iterator[GrantEgress]:
    """``grant_egress(*entries)``: the operator grants http.fetch exactly ``entries`` (what
    ``RuntimeConfig.grants``/``--grant`` give a runtime), until the test ends."""
    saved = GRANTS[0]

    def grant(*entries: str) -> None:
        GRANTS[0] = Grants({**saved.by_pack, PACK: Grant(egress=entries)})

    yield grant
    GRANTS[0] = saved


def test_metadata_link_local_and_private_are_refused_before_connect(
    spy: Spy, servers: Any, grant_egress: GrantEgress
) -> None:
    first = servers[0]
    grant_egress("public", f"loopback:{first.port}")
    invoker, call = make_call(http_fetch)
    try:
        for url in (
            "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
            "http://[fd00:ec2::254]/latest/meta-data/",
            "http://100.100.100.200/latest/meta-data/",
            "http://[::ffff:169.254.169.254]/",
            "http://imds.test/latest/meta-data/",
            "http://imds6.test/",
            "http://169.254.10.10/",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://[fe80::1]/",
            "http://[fd12::1]/",
            "http://100.64.0.1/",
            "http://rebind.test/",  # neither answer is granted on port 80
            first.url("/redirect?to=http://169.254.169.254/latest/meta-data/"),
            first.url("/redirect?to=http://imds.test/"),
        ):
            error = assert_error(call(PACK, {"url": url}), "not_permitted")
            if "imds" in url:  # a name's resolved address is not told, only its category
                assert "169.254" not in error["message"] and "fd00" not in error["message"]
                assert "metadata" in error["message"]
    finally:
        invoker.close()
    # Only the granted loopback server was ever connected to (the two redirects' first hop).
    assert spy.attempts == [LOOPBACK, LOOPBACK]


def test_an_operator_grant_opens_exactly_what_it_names(
    spy: Spy, servers: Any, grant_egress: GrantEgress
) -> None:
    first = servers[0]
    grant_egress(f"loopback:{first.port}")
    invoker, call = make_call(http_fetch)
    try:
        assert call(PACK, {"url": first.url("/plain")}).ok
        assert_error(call(PACK, {"url": f"http://localhost:{first.port + 1}/"}), "not_permitted")
        grant_egress("loopback:not-a-port")  # broken: refuses, never widens
        error = assert_error(call(PACK, {"url": first.url("/plain")}), "not_permitted")
        assert "invalid" in error["message"]
    finally:
        invoker.close()


# -- secrets across origins and inside encoded bodies --------------------------------------------


def test_caller_headers_that_may_be_secrets_stay_with_the_origin(
    tmp_path: Path, servers: Any
) -> None:
    first, _, second, _ = servers
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "X-Api-Key": API_KEY,
        "X-Request-Tag": "tag-1",
        "Accept": "application/json",
    }
    with serve(tmp_path, "loopback") as server:
        same = fetch(server, {"url": first.url("/redirect?to=/echo"), "headers": headers})
        assert same.code == "ok"
        seen = same.result["body"]["headers"]
        assert seen["x-request-tag"] == "tag-1" and seen["x-api-key"] == "[REDACTED]"
        other = fetch(
            server, {"url": first.url(f"/redirect?to={second.url('/echo')}"), "headers": headers}
        )
        assert other.code == "ok"
        seen = other.result["body"]["headers"]
        assert "authorization" not in seen and "x-api-key" not in seen
        assert "x-request-tag" not in seen  # any header may be a credential: only the safe go
        assert seen["accept"] == "application/json"


def _b64_cores(secret: str) -> list[str]:
    out = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + secret.encode()).decode()
        out.append(encoded[4 : len(encoded) - 4])
    return out


def test_secrets_echoed_in_a_binary_body_do_not_come_back_in_any_encoding(
    tmp_path: Path, servers: Any
) -> None:
    first = servers[0]
    doc = {
        "url": first.url("/binary-echo"),
        "credential": {"bearer": TOKEN},
        "headers": {"X-Api-Key": API_KEY},
    }
    with serve(tmp_path, "loopback") as server:
        received = fetch(server, doc)
    assert received.code == "ok", received.message
    assert received.result["body_format"] == "base64"
    raw = base64.b64decode(received.result["body"])
    text = orjson.dumps(received.result).decode()
    for secret in (TOKEN, API_KEY):
        assert secret.encode() not in raw
        assert quote(secret, safe="").encode() not in raw
        for core in _b64_cores(secret):
            assert core.encode() not in raw, core
            assert core not in text
    assert b"[REDACTED]" in raw


def test_secrets_in_text_and_json_are_scrubbed_in_every_form(servers: Any) -> None:
    first = servers[0]
    with granted({PACK: Grant(egress=("loopback",))}):
        invoker, call = make_call(http_fetch)
        try:
            outcome = call(PACK, {"url": first.url("/echo"), "headers": {"X-Api-Key": API_KEY}})
        finally:
            invoker.close()
    assert outcome.ok
    assert_no_secrets(outcome, API_KEY, *_b64_cores(API_KEY))


# -- caller regular expressions: never a backtracking engine ------------------------------------


def test_a_caller_pattern_cannot_freeze_the_server(tmp_path: Path, servers: Any) -> None:
    first = servers[0]
    backreference = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"pattern": "^(a|aa)+\\1$"}}},
    }
    catastrophic = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"pattern": "^(a+)+$"}}},
    }
    with serve(tmp_path, "loopback") as server:
        health = health_pb2_grpc.HealthStub(server.channel)
        pool = concurrent.futures.ThreadPoolExecutor(2)
        slow = pool.submit(
            fetch, server, {"url": first.url("/aaa"), "json_schema": backreference}, 120
        )
        time.sleep(0.5)
        started = time.monotonic()
        reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        assert fetch(server, {"url": first.url("/plain")}, timeout=10).code == "ok"
        assert time.monotonic() - started < 10
        received = slow.result(120)
        pool.shutdown()
        assert received.code == "invalid_json_schema", received.message
        assert "/properties/items/items/pattern" in received.message
        # A pattern with no backreference runs on the linear engine: an answer, at once.
        received = fetch(
            server, {"url": first.url("/aaa"), "json_schema": catastrophic}, timeout=10
        )
        assert received.code == "schema_mismatch"
        lookaround = {"patternProperties": {"^(?!x)": {"type": "string"}}}
        received = fetch(server, {"url": first.url("/plain"), "json_schema": lookaround})
        assert received.code == "invalid_json_schema"
        assert "patternProperties" in received.message


# -- issue 34: cancellation reaches the socket; max_bytes is bounded ------------------------------


def test_cancelled_calls_free_their_threads(tmp_path: Path, servers: Any) -> None:
    first = servers[0]
    with RawTCPServer("silent") as hole, serve(tmp_path, "loopback") as server:
        stub = server.channel.unary_unary(
            "/control_plane.v1.ControlPlaneService/InvokePack",
            request_serializer=pb.InvokePackRequest.SerializeToString,
            response_deserializer=pb.InvokePackResponse.FromString,
        )
        black_hole = {"url": f"http://{LOOPBACK}:{hole.port}/", "timeout": 600}
        request = pb.InvokePackRequest(pack=PACK, input=orjson.dumps(black_hole))
        calls = [stub.future(request, timeout=600) for _ in range(120)]
        time.sleep(1.0)
        for future in calls:
            future.cancel()
        time.sleep(1.0)
        started = time.monotonic()
        fast = fetch(server, {"url": first.url("/plain")}, timeout=10)
        assert fast.code == "ok", (fast.status, fast.message)
        other = invoke(
            server.channel, "av.validate", {"path": str(tmp_path / "missing.mp4")}, timeout=10
        )
        assert other.code not in (None, "internal_error"), (other.status, other.message)
        assert time.monotonic() - started < 10


def test_max_bytes_is_capped_by_the_message_limit(servers: Any) -> None:
    first = servers[0]
    with granted({PACK: Grant(egress=("loopback",))}):
        invoker, call = make_call(http_fetch)
        try:
            outcome = call(PACK, {"url": first.url("/big"), "max_bytes": 100 * 1024 * 1024})
        finally:
            invoker.close()
    error = assert_error(outcome, "too_large")
    assert "message limit" in error["message"]


def test_the_body_cap_is_the_servers_max_message_bytes(tmp_path: Path, servers: Any) -> None:
    """``packctl serve --max-message-bytes`` is the cap on ``max_bytes``: a 6 MiB body is
    ``too_large`` (naming the server's limit) under 5 MiB and comes back whole under
    16 MiB, where a ``max_bytes`` above the limit is capped at it, not at 4 MiB."""
    first = servers[0]
    doc = {"url": first.url("/big"), "max_bytes": 100 * 1024 * 1024}
    five, sixteen = 5 * 1024 * 1024, 16 * 1024 * 1024
    for where, isolate in (("a", ()), ("isolated", ("--isolate", PACK))):
        limit = ("--max-message-bytes", str(five))
        with serve(tmp_path / where, "loopback", *limit, *isolate) as server:
            got = fetch(server, doc)
        assert got.code == "too_large", (isolate, got.status, got.message)
        assert f"message limit of {five} bytes" in got.message, isolate
    with serve(tmp_path / "b", "loopback", "--max-message-bytes", str(sixteen)) as server:
        channel = grpc.insecure_channel(
            server.target, options=[("grpc.max_receive_message_length", sixteen)]
        )
        try:
            whole = invoke(channel, PACK, doc, timeout=30)
            capped = invoke(channel, PACK, {**doc, "url": first.url("/huge")}, timeout=30)
        finally:
            channel.close()
    assert whole.code == "ok", (whole.status, whole.message)
    assert whole.result is not None and whole.result["bytes"] == 6 * 1024 * 1024
    assert capped.code == "too_large", (capped.status, capped.message)
    assert f"message limit of {sixteen} bytes" in capped.message
