"""A hostile or careless MCP server wrapped as packs (tests/mcp_hostile_server.py, real
processes on 127.0.0.1): whatever it does, a caller gets a declared code, no secret, and
every other pack keeps serving. No timing assertions: the figures are bench/mcp_stall.py's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from mcp_source_support import Serve, wait_for
from server_support import TESTS_DIR

from control_plane.wire.client import Client, PackCallError

pytestmark = pytest.mark.timeout(300)

HOSTILE = TESTS_DIR / "mcp_hostile_server.py"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
LIMIT = 1024 * 1024  # max_message_bytes of the hostile servers; their huge answer is 20 MiB


def _start_http(log: Path) -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen(
        [sys.executable, str(HOSTILE), "--http"],
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
