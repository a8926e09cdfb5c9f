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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from child_processes import tied
from mcp_source_support import Serve, wait_for
from server_support import TESTS_DIR

from control_plane.wire.client import Client, PackCallError

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
        http.terminate()
        http.wait(10)


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
        ("hostile.nonjson", {"server_unavailable"}),  # a line that is not JSON-RPC
        ("hostile.bad_utf8", {"server_unavailable"}),  # a line that is not UTF-8
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


@pytest.mark.parametrize("pack", ["hostile.hang", "hostile.wrong_id", "web.hang"])
def test_no_answer_is_a_timeout_at_the_deadline(hostile: Hostile, pack: str) -> None:
    hostile.serving_again("hostile.echo")
    late = hostile.fail(pack, {}, deadline=2.0)
    assert late.code == "timeout", late.envelope
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


def test_schemas_pointing_outside_are_refused_and_careless_servers_are_told_clearly(
    tmp_path: Path,
) -> None:
    """A tool's schema may not make the control plane fetch a URL the server chose; a banner
    on stdout or a slow initialize is a load failure that quotes none of the server's
    output; tools colliding on one pack name are load failures; the rest serves."""
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
            assert client.invoke("lists.echo", {"text": "hi"}, timeout=30).result["text"] == "hi"
            assert client.invoke("test.noop", {}, timeout=30).result == {}
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
    assert "banner" in text and "Invalid JSON" in text
    assert "banner-tail-xyz" not in text and SECRET[-20:] not in text
    assert SECRET[-20:] not in log
    assert "Future exception was never retrieved" not in log
