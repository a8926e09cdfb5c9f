"""A hostile or careless MCP server wrapped as packs (tests/mcp_hostile_server.py, real
processes on 127.0.0.1): whatever it does, a caller gets a declared code, no secret, and
every other pack keeps serving. No timing assertions: the figures are bench/mcp_stall.py's.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from child_processes import stop, tied
from mcp_source_support import Serve, wait_for
from server_support import TESTS_DIR
from tiers import starts_processes

from control_plane._features.grpc.client import Client, PackCallError

pytestmark = pytest.mark.timeout(300)

HOSTILE = TESTS_DIR / "mcp_hostile_server.py"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
LIMIT = 1024 * 1024  # max_message_bytes of the hostile servers; their huge answer is 20 MiB


def _start_http(log: Path) -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen(
        tied([sys.executable, str(HOSTILE), "--http"]),
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        start_new_session=True,
    )
    wait_for(lambda: b"listening on port" in log.read_bytes(), 60, "the hostile HTTP server")
    port = int(log.read_bytes().split(b"listening on port ")[1].split()[0])
    return proc, port


def _text(client: Client, pack: str, doc: dict[str, Any], timeout: float = 30) -> str:
    """The ``text`` of ``pack``'s result."""
    result = client.invoke(pack, doc, timeout=timeout).result
    assert result is not None
    return str(result["text"])


class Hostile:
    def __init__(self, serve: Serve) -> None:
        self.serve = serve
        self.client = Client(serve.target)

    def call(self, pack: str, doc: dict[str, Any], deadline: float = 60.0) -> Any:
        return self.client.invoke(pack, doc, timeout=deadline).result

    def fail(self, pack: str, doc: dict[str, Any], deadline: float = 60.0) -> PackCallError:
        with pytest.raises(PackCallError) as info:
            self.client.invoke(pack, doc, timeout=deadline)
        return info.value

    def serving_again(self, pack: str) -> None:
        """Wait (bounded) until ``pack``'s restarted server answers an echo."""

        def answers() -> bool:
            try:
                return bool(self.call(pack, {"text": "back"}, deadline=10)["text"] == "back")
            except PackCallError as exc:
                assert exc.code == "server_unavailable", exc.envelope
                return False

        wait_for(answers, 60, f"{pack} serving again")


@pytest.fixture(scope="module")
@starts_processes
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    base = tmp_path_factory.mktemp("mcp_hostile")
    http, port = _start_http(base / "http.log")
    py = json.dumps(sys.executable)
    script = json.dumps(str(HOSTILE))
    config = base / "packctl-mcp.toml"
    config.write_text(
        f"""version = 1
[servers.hostile]
command = {py}
args = [{script}]
prefix = "hostile"
max_message_bytes = {LIMIT}
health_interval = 0.5
restart_backoff = 0.2
restart_backoff_max = 1

[servers.calm]
command = {py}
args = [{script}]
prefix = "calm"
tools = ["echo"]

[servers.web]
url = "http://127.0.0.1:{port}/mcp"
prefix = "web"
max_message_bytes = {LIMIT}
health_interval = 0.5
restart_backoff = 0.2
restart_backoff_max = 1
"""
    )
    serve = Serve(config, base / "serve.log", "--plugin", "testpacks", "--log-level", "info")
    h = Hostile(serve)
    try:
        yield h
    finally:
        h.client.close()
        serve.stop()
        stop(http)


class Background:
    """Calls to other packs (a pack of the process, another MCP server's) while the hostile
    one misbehaves: each must succeed."""

    def __init__(self, target: str) -> None:
        self._stop = threading.Event()
        self.errors: list[BaseException] = []
        self.done = 0
        self._threads = [
            threading.Thread(target=self._loop, args=(target, pack, doc))
            for pack, doc in (("test.noop", {}), ("calm.echo", {"text": "calm"}))
        ]

    def _loop(self, target: str, pack: str, doc: dict[str, Any]) -> None:
        with Client(target) as client:
            while not self._stop.is_set():
                try:
                    client.invoke(pack, doc, timeout=30)
                    self.done += 1
                except PackCallError as exc:
                    self.errors.append(exc)

    def __enter__(self) -> Background:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(60)


# -- messages over max_message_bytes -------------------------------------------------------


@pytest.mark.system
@pytest.mark.parametrize(
    ("pack", "echo"),
    [
        ("hostile.huge", "hostile.echo"),  # one 20 MiB stdio line
        ("hostile.endless", "hostile.echo"),  # a stdio line that never ends
        ("web.huge", "web.echo"),  # a 20 MiB JSON body
        ("web.huge_sse", "web.echo"),  # a 20 MiB SSE event
        ("web.endless", "web.echo"),  # a body that never ends
    ],
)
def test_a_message_over_max_message_bytes_is_dropped_unread(
    hostile: Hostile, pack: str, echo: str
) -> None:
    hostile.serving_again(echo)
    with Background(hostile.serve.target) as background:
        failed = hostile.fail(pack, {})
        hostile.serving_again(echo)
    assert failed.code == "server_unavailable", failed.envelope
    assert failed.status == grpc.StatusCode.UNAVAILABLE
    if pack != "web.huge_sse":  # the SDK bounds an SSE event itself, with its own words
        assert f"max_message_bytes ({LIMIT} bytes)" in failed.envelope.message
    assert background.errors == []
    assert background.done > 0
    assert hostile.call(echo, {"text": "after"})["text"] == "after"


# -- other misbehaviours -------------------------------------------------------------------


def _no_secret(exc: PackCallError) -> str:
    text = json.dumps(exc.envelope.model_dump(mode="json"))
    for secret in (SECRET, "hunter2hunter2"):
        assert secret not in text, text
    return text


@pytest.mark.parametrize(
    ("pack", "codes"),
    [
        ("hostile.exit", {"server_unavailable"}),  # the process exits mid-call
        # A JSON-RPC answer that is not UTF-8: a broken message, not a log line to skip.
        ("hostile.bad_utf8", {"server_unavailable"}),
        ("hostile.secret_error", {"internal_error"}),  # isError, credentials in the text
        ("hostile.error_data", {"internal_error"}),  # a JSON-RPC error with secrets, 1 MB data
        ("hostile.bad_structured", {"internal_error"}),  # breaks its own outputSchema
    ],
)
def test_misbehaviour_is_a_declared_code_without_secrets(
    hostile: Hostile, pack: str, codes: set[str]
) -> None:
    hostile.serving_again("hostile.echo")
    with Background(hostile.serve.target) as background:
        failed = hostile.fail(pack, {})
        hostile.serving_again("hostile.echo")
    assert failed.code in codes, failed.envelope
    _no_secret(failed)
    assert background.errors == []
    assert hostile.call("hostile.echo", {"text": "after"})["text"] == "after"


@pytest.mark.parametrize(
    "pack",
    [
        "hostile.hang",
        "hostile.wrong_id",
        "web.hang",
        # A line that is not JSON-RPC instead of the answer: skipped (logged) like a
        # banner, so the call has no answer; the connection is not dropped for it.
        "hostile.nonjson",
    ],
)
def test_no_answer_is_a_timeout_at_the_deadline(hostile: Hostile, pack: str) -> None:
    hostile.serving_again("hostile.echo")
    late = hostile.fail(pack, {}, deadline=2.0)
    assert late.code == "timeout", late.envelope
    _no_secret(late)
    echo = "web.echo" if pack.startswith("web.") else "hostile.echo"
    assert hostile.call(echo, {"text": "after"})["text"] == "after"


def test_odd_content_blocks(hostile: Hostile) -> None:
    hostile.serving_again("hostile.echo")
    try:
        result = hostile.call("hostile.odd_content", {})
    except PackCallError as exc:
        assert exc.code == "internal_error", exc.envelope
    else:
        assert result["text"] == "plain"
    assert hostile.call("hostile.echo", {"text": "after"})["text"] == "after"


def test_notification_flood_and_stderr_flood(hostile: Hostile) -> None:
    hostile.serving_again("hostile.echo")
    with Background(hostile.serve.target) as background:
        flood = hostile.call("hostile.flood", {"count": 20000})
        assert flood["text"] == "after the flood"
        err = hostile.call("hostile.stderr_flood", {"mb": 8})
        assert err["text"] == "after the stderr flood"
    assert background.errors == []
    assert hostile.call("hostile.echo", {"text": "after"})["text"] == "after"
    log = hostile.serve.log.read_text(errors="replace")
    assert SECRET not in log
    assert max(len(line) for line in log.splitlines()) < 1_000_000


# -- what a server lists -------------------------------------------------------------------


class _Fetches(http.server.BaseHTTPRequestHandler):
    """A loopback endpoint that counts what the control plane fetches from it."""

    hits: list[str] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.system
def test_schemas_pointing_outside_are_refused_and_careless_servers_are_told_clearly(
    tmp_path: Path,
) -> None:
    """A tool's schema may not make the control plane fetch a URL the server chose; a slow
    initialize is a load failure; a banner on stdout is skipped (the server serves) and
    quoted nowhere but scrubbed in the log; tools colliding on one pack name are load
    failures; the rest serves."""
    fetches = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fetches)
    threading.Thread(target=fetches.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{fetches.server_address[1]}"
    obj = {"type": "object"}
    extra = [
        {"name": "in_ref", "inputSchema": {**obj, "properties": {"x": {"$ref": f"{base}/in"}}}},
        {"name": "out_ref", "inputSchema": obj, "outputSchema": {**obj, "$schema": f"{base}/m"}},
        {
            "name": "id_ref",
            "inputSchema": {**obj, "$id": f"{base}/b/", "properties": {"x": {"$ref": "o.json"}}},
        },
        {
            "name": "local_ref",
            "inputSchema": {
                **obj,
                "$defs": {"s": {"type": "string"}},
                "properties": {"x": {"$ref": "#/$defs/s"}},
            },
        },
        {"name": "Echo", "inputSchema": obj},
    ]
    tools_file = tmp_path / "extra.json"
    tools_file.write_text(json.dumps(extra))
    py = json.dumps(sys.executable)
    script = json.dumps(str(HOSTILE))
    banner = f"Server started on stdio, token={SECRET} banner-tail-xyz"
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"""version = 1
[servers.lists]
command = {py}
args = [{script}, "--extra-tools", {json.dumps(str(tools_file))}]
prefix = "lists"
tools = ["echo", "in_ref", "out_ref", "id_ref", "local_ref", "Echo"]

[servers.banner]
command = {py}
args = [{script}, "--banner", {json.dumps(banner)}]
prefix = "banner"
startup_timeout = 10

[servers.slow]
command = {py}
args = [{script}, "--init-delay", "30"]
prefix = "slow"
startup_timeout = 1
"""
    )
    serve = Serve(config, tmp_path / "serve.log", "--plugin", "testpacks")
    try:
        with Client(serve.target) as client:
            assert _text(client, "lists.echo", {"text": "hi"}) == "hi"
            assert client.invoke("test.noop", {}, timeout=30).result == {}
            assert _text(client, "banner.echo", {"text": "b"}) == "b"
            listing = client.list_packs()
            packs = {p.name for p in listing}
            failures = [f"{f.plugin} {f.pack} {f.reason}" for f in listing.failures]
    finally:
        log = serve.stop()
        fetches.shutdown()
    assert _Fetches.hits == []
    assert "lists.local_ref" in packs  # a local reference is fine
    assert not packs & {"lists.in_ref", "lists.out_ref", "lists.id_ref"}
    text = "\n".join(failures)
    for tool in ("in_ref", "out_ref", "id_ref"):
        assert f"tool '{tool}'" in text
    assert "outside the schema" in text
    assert "duplicate pack name 'lists.echo'" in text
    assert "slow" in text and "did not answer initialize" in text
    assert "banner" not in text and "Invalid JSON" not in text
    assert "banner-tail-xyz" not in text and SECRET[-20:] not in text
    assert "banner.echo" in packs
    assert "banner-tail-xyz" in log  # the skipped line, logged scrubbed
    assert SECRET[-20:] not in log
    assert "Future exception was never retrieved" not in log


# -- lines on stdout that are not JSON-RPC ---------------------------------------------------


@pytest.mark.system
def test_lines_that_are_not_json_rpc_are_skipped_logged_scrubbed_and_bounded(
    tmp_path: Path,
) -> None:
    """Many servers print a banner or log lines on stdout: each is skipped and logged
    (scrubbed, cut, and only so many: 20000 of them do not flood the log), the server serves
    and is not restarted for them. A server whose stdout is only such lines is a load failure
    that says so, at its startup_timeout, not a hang."""
    py = json.dumps(sys.executable)
    script = json.dumps(str(HOSTILE))
    banner = f"Server started on stdio, token={SECRET} banner-tail-xyz"
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"""version = 1
[servers.chatty]
command = {py}
args = [{script}, "--banner", {json.dumps(banner)}, "--chatty"]
prefix = "chatty"
health_interval = 0.3

[servers.junk]
command = {py}
args = [{script}, "--only-junk"]
prefix = "junk"
startup_timeout = 2
"""
    )
    serve = Serve(config, tmp_path / "serve.log", "--plugin", "testpacks", "--log-level", "info")
    try:
        [pid] = serve.children("--chatty")
        with Client(serve.target) as client:
            for i in range(5):
                assert _text(client, "chatty.echo", {"text": f"hi {i}"}) == f"hi {i}"
            noise = _text(client, "chatty.noise", {"count": 20000}, timeout=60)
            assert noise == "after the noise"
            time.sleep(1.5)  # a few health pings, each answer after two junk lines
            assert _text(client, "chatty.echo", {"text": "x"}) == "x"
            assert client.invoke("test.noop", {}, timeout=30).result == {}
            listing = client.list_packs()
        assert serve.children("--chatty") == [pid]  # never restarted
    finally:
        log = serve.stop()
    packs = {p.name for p in listing}
    assert "chatty.echo" in packs
    assert not any(name.startswith("junk.") for name in packs)
    [junk] = [f for f in listing.failures if f.plugin == "mcp:junk"]
    assert "servers.junk" in junk.reason, junk.reason
    assert "did not answer initialize" in junk.reason, junk.reason
    assert "not JSON-RPC" in junk.reason, junk.reason
    assert not [f for f in listing.failures if f.plugin == "mcp:chatty"]
    failures = "\n".join(f.reason for f in listing.failures)
    assert "banner-tail-xyz" not in failures and "token" not in failures
    # The log: the skipped lines, scrubbed and cut, a bounded number of records.
    for secret in (SECRET[-20:], "hunter2hunter2"):
        assert secret not in log
    assert "banner-tail-xyz" in log
    skipped = [line for line in log.splitlines() if "not JSON-RPC" in line]
    chatty = [line for line in skipped if "chatty" in line]
    assert chatty, log[-3000:]
    assert len(chatty) <= 15, "\n".join(chatty[-20:])
    assert any("junk" in line for line in skipped)
    assert max(len(line) for line in skipped) < 1000
    assert any("without logging" in line for line in chatty), "\n".join(chatty)


# -- invalid schemas in tools/list -----------------------------------------------------------


@pytest.mark.system
def test_a_tool_with_an_invalid_schema_is_skipped_and_the_other_tools_load(
    tmp_path: Path,
) -> None:
    """One tool whose schema the SDK or the registry refuses is a load failure naming the
    server and the tool and why; the server's other tools load and serve. A server none of
    whose exposed tools is valid fails to load, clearly, and is stopped."""
    py = json.dumps(sys.executable)
    script = json.dumps(str(HOSTILE))
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"""version = 1
[servers.mixed]
command = {py}
args = [{script}, "--bad-schemas"]
prefix = "mixed"

[servers.allbad]
command = {py}
args = [{script}, "--only-bad-schemas"]
prefix = "allbad"

[servers.picked]
command = {py}
args = [{script}, "--bad-schemas", "--init-delay", "0"]
prefix = "picked"
tools = ["in_not_object", "in_missing"]
"""
    )
    serve = Serve(config, tmp_path / "serve.log", "--plugin", "testpacks")
    try:
        with Client(serve.target) as client:
            assert _text(client, "mixed.echo", {"text": "hi"}) == "hi"
            assert client.invoke("test.noop", {}, timeout=30).result == {}
            listing = client.list_packs()
        wait_for(lambda: serve.children("--only-bad-schemas") == [], 30, "allbad stopped")
        wait_for(lambda: serve.children("--init-delay") == [], 30, "picked stopped")
        assert len(serve.children("--bad-schemas")) == 1  # mixed serves on
    finally:
        log = serve.stop()
    packs = {p.name for p in listing}
    assert {"mixed.echo", "mixed.huge", "mixed.bad_structured"} <= packs
    assert not any(p.startswith(("allbad.", "picked.")) for p in packs), packs
    mixed = [f for f in listing.failures if f.plugin == "mcp:mixed"]
    why = {
        "in_not_object": "inputSchema.type",
        "in_not_a_dict": "inputSchema",
        "in_missing": "inputSchema",
        "out_bad_required": "outputSchema.required",
        "in_bad_keyword": "properties",
        "in_remote_ref": "outside the schema",
    }
    for tool, reason in why.items():
        [failure] = [f for f in mixed if f"tool '{tool}'" in f.reason]
        assert "servers.mixed" in failure.reason, failure.reason
        assert reason in failure.reason, failure.reason
        assert failure.pack == f"mixed.{tool}", failure
    assert len(mixed) == len(why), [f.reason for f in mixed]
    assert not any("did not start" in f.reason for f in mixed)
    for server, count in (("allbad", 6), ("picked", 2)):
        ours = [f.reason for f in listing.failures if f.plugin == f"mcp:{server}"]
        assert len(ours) == count + 1, ours
        assert f"servers.{server}: none of the {count} tool(s)" in ours[-1], ours[-1]
        assert "stopped" in ours[-1], ours[-1]
    assert "Traceback" not in log


def test_skipped_lines_are_told_apart_from_broken_messages_and_logged_within_bounds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from control_plane._features.mcp.source.transport import StdoutNoise, meant_as_jsonrpc

    # Skipped: log lines, plain or JSON records, and JSON that is no object.
    for line in (b"Server started", b"[INFO] up", b'{"level":30,"msg":"up"}', b"[1, 2]", b"42"):
        assert not meant_as_jsonrpc(line), line
    # Broken messages (the connection is dropped, as before): they name jsonrpc.
    for line in (
        b'{"jsonrpc":"2.0","id":1,"result":"\xff\xfe"}',  # not UTF-8
        b'{"jsonrpc":"2.0","id":1,"result":',  # cut
        b'{"jsonrpc":"1.0","id":1}',  # not a message of 2.0
        b'{"jsonrpc":' + b"[" * 100_000 + b"]" * 100_000 + b"}",  # nested too deep
    ):
        assert meant_as_jsonrpc(line), line[:40]

    now = [0.0]
    noise = StdoutNoise("srv", burst=3, interval=10.0, clock=lambda: now[0])
    with caplog.at_level("WARNING", logger="capability_packs.mcp_source"):
        for _ in range(1000):
            noise.skipped(f"token={SECRET} ".encode() + b"x" * 100_000)
        now[0] = 25.0  # two more records' worth of time
        for _ in range(1000):
            noise.skipped(b"later")
        noise.flush()
    records = [r.getMessage() for r in caplog.records]
    assert noise.total == 2000
    assert len(records) == 3 + 2 + 1, records
    assert all(SECRET not in r and len(r) < 500 for r in records)
    assert "997 more skipped without logging" in records[3], records[3]
    assert "998 more line(s)" in records[-1] and "2000 in all" in records[-1], records[-1]
