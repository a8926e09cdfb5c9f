"""Issue 41 A, from outside: a caller's ``json_schema`` against a real ``packctl serve``.

The schema is the caller's; before control_plane/_kernel/outside_schema.py the validator
library fetched an unknown ``$schema`` URI itself (from the server, to loopback), read
``file://`` URIs, and spent a minute of native compile time on 70,000 chained local
``$ref`` s while the whole server waited (the issue saw it crash). Each must come back as
``invalid_json_schema`` at once, nothing fetched, and the server must keep answering.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from pack_servers import LOOPBACK, HTTPServerThread, QuietHandler
from raw_wire import Received, Serve, invoke

PACK = "http.fetch"

pytestmark = pytest.mark.system  # a packctl serve process


class _Counting(QuietHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "object"}' if self.path != "/many" else MANY
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def counting() -> Iterator[tuple[HTTPServerThread, list[str]]]:
    hits: list[str] = []
    server = HTTPServerThread(type("Bound", (_Counting,), {"hits": hits}))
    yield server, hits
    server.close()


#: 200,000 strings: 1.2 MB of JSON.
MANY = orjson.dumps(["x"] * 200_000)


def chained_refs(count: int) -> dict[str, Any]:
    """``count`` local references, each to the next: ``#/$defs/0`` -> ``1`` -> ... -> a string."""
    defs: dict[str, Any] = {str(i): {"$ref": f"#/$defs/{i + 1}"} for i in range(count)}
    defs[str(count)] = {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/0"}


def _refused(received: Received) -> str:
    assert received.code == "invalid_json_schema", (received.status, received.message)
    assert received.metadata.get("retryable") == "false"
    return received.message


def test_outside_schemas_are_refused_typed_and_fetch_nothing(
    tmp_path: Path, counting: tuple[HTTPServerThread, list[str]]
) -> None:
    web, hits = counting
    here = f"http://{LOOPBACK}:{web.port}"
    chain = chained_refs(70_000)
    assert len(orjson.dumps(chain)) < 4 * 1024 * 1024  # within the message limit: it arrives
    schemas: dict[str, dict[str, Any]] = {
        "70,000 chained $refs": chain,
        "15,000 chained $refs": chained_refs(15_000),
        "unknown $schema": {"$schema": f"{here}/meta", "type": "object"},
        "remote $ref": {"$ref": f"{here}/ref"},
        "file $schema": {"$schema": "file:///dev/zero"},
        "file $ref": {"properties": {"a": {"$ref": "file:///etc/passwd"}}},
        "$id moving the base": {"$defs": {"x": {"$id": f"{here}/x/", "$ref": "#/y"}}},
        "2**40 paths": {
            "$defs": {
                str(i): {"allOf": [{"$ref": f"#/$defs/{i + 1}"}, {"$ref": f"#/$defs/{i + 1}"}]}
                for i in range(40)
            }
            | {"40": {"type": "string"}},
            "$ref": "#/$defs/0",
        },
    }
    with Serve(tmp_path / "incidents.db", "--grant", f"{PACK}:egress=loopback") as server:
        for what, schema in schemas.items():
            started = time.monotonic()
            message = _refused(
                invoke(
                    server.channel,
                    PACK,
                    {"url": f"{here}/body", "json_schema": schema},
                    timeout=30,
                )
            )
            took = time.monotonic() - started
            assert took < 5, (what, took)
            assert message.startswith("invalid_json_schema: json_schema"), (what, message)
            print(what, "->", message)
            assert server.alive(), what
        # A schema within every bound, over a body whose check would hold the server (2**10
        # paths through references for each of 200,000 values: 8 s with the GIL held).
        paths = {
            str(i): {"allOf": [{"$ref": f"#/$defs/{i + 1}"}, {"$ref": f"#/$defs/{i + 1}"}]}
            for i in range(10)
        } | {"10": {"type": "string"}}
        started = time.monotonic()
        costly = invoke(
            server.channel,
            PACK,
            {
                "url": f"{here}/many",
                "json_schema": {"$defs": paths, "items": {"$ref": "#/$defs/0"}},
            },
            timeout=30,
        )
        assert costly.code == "too_large", (costly.status, costly.message)
        assert "too large for json_schema" in costly.message
        assert time.monotonic() - started < 5
        # The server still answers, and a local schema of the same shape still works.
        ok = invoke(
            server.channel,
            PACK,
            {"url": f"{here}/body", "json_schema": chained_refs(20)},
            timeout=30,
        )
        assert ok.code == "schema_mismatch", (ok.status, ok.message)  # an object, not a string
        assert server.alive()
    # Only the fetches the caller asked for: no $schema, no $ref.
    assert hits == ["/many", "/body"]


def test_mcp_tool_schemas_pass_the_same_gate(tmp_path: Path) -> None:
    """An MCP server's tools/list: a 70,000-reference chain, a backreference pattern (a
    backtracking engine: 100 of them cost 5.4 s per call), an unknown ``$schema``. Each tool
    is a load failure of its own, at once; the server's other tools serve."""
    from mcp_source_support import Serve as McpServe
    from server_support import TESTS_DIR

    from control_plane._features.grpc.client import Client

    backtracking = {"anyOf": [{"type": "string", "pattern": f"^(a+)+{i}\\1$"} for i in range(50)]}
    extra = [
        {"name": "chain", "inputSchema": {"type": "object", **chained_refs(70_000)}},
        {
            "name": "backtrack",
            "inputSchema": {"type": "object", "properties": {"x": backtracking}},
        },
        {"name": "dialect", "inputSchema": {"type": "object", "$schema": "file:///dev/zero"}},
    ]
    tools = tmp_path / "extra.json"
    tools.write_text(orjson.dumps(extra).decode())
    config = tmp_path / "packctl-mcp.toml"
    hostile = TESTS_DIR / "mcp_hostile_server.py"
    config.write_text(
        f"""version = 1
[servers.big]
command = {orjson.dumps(sys.executable).decode()}
args = [{orjson.dumps(str(hostile)).decode()}, "--extra-tools", {orjson.dumps(str(tools)).decode()}]
prefix = "big"
tools = ["echo", "chain", "backtrack", "dialect"]
"""
    )
    started = time.monotonic()
    serve = McpServe(config, tmp_path / "serve.log")
    try:
        assert time.monotonic() - started < 60
        with Client(serve.target) as client:
            answer = client.invoke("big.echo", {"text": "hi"}, timeout=30).result
            assert answer is not None and answer["text"] == "hi"
            listing = client.list_packs()
    finally:
        serve.stop()
    packs = {p.name for p in listing}
    assert "big.echo" in packs and not packs & {"big.chain", "big.backtrack", "big.dialect"}
    why = {f.pack: f.reason for f in listing.failures}
    assert "more than 50000 JSON values" in why["big.chain"], why
    assert "backtracking" in why["big.backtrack"], why
    assert "outside the schema" in why["big.dialect"], why
