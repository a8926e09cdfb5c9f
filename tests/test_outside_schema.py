"""Issue 41 A, in process: the one gate every JSON Schema passes before a library sees it
(control_plane/_kernel/outside_schema.py), and what check_schema/CompiledSchema/the registry
make of what it refuses. The real ``packctl serve`` attacks:
tests/packs/test_outside_schema_serve.py.
"""

from __future__ import annotations

import http.server
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from runtime_support import make_pack

from control_plane._kernel.errors import PluginLoadError
from control_plane._kernel.outside_schema import (
    MAX_CHAIN,
    MAX_DEPTH,
    MAX_EXPANDED,
    MAX_NODES,
    MAX_PATTERN,
    MAX_PATTERNS,
    MAX_TEXT,
    outside_schema_fault,
)
from control_plane._kernel.registry import Registry
from control_plane._kernel.schema import CompiledSchema, check_schema


def chain(count: int, *, via: str = "$defs") -> dict[str, Any]:
    defs: dict[str, Any] = {str(i): {"$ref": f"#/{via}/{i + 1}"} for i in range(count)}
    defs[str(count)] = {"type": "string"}
    return {via: defs, "$ref": f"#/{via}/0"}


def doubling(levels: int) -> dict[str, Any]:
    """Each definition refers to the next twice: 2**levels paths, a few dozen nodes."""
    defs: dict[str, Any] = {
        str(i): {"allOf": [{"$ref": f"#/$defs/{i + 1}"}, {"$ref": f"#/$defs/{i + 1}"}]}
        for i in range(levels)
    }
    defs[str(levels)] = {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/0"}


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"not": schema}
    return schema


class _Hits(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def web() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), type("Bound", (_Hits,), {"hits": hits})
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


def test_nothing_a_schema_names_is_fetched_or_read(web: tuple[str, list[str]]) -> None:
    """On main, jsonschema-rs's meta-validation fetched the unknown ``$schema`` itself."""
    base, hits = web
    for schema in (
        {"$schema": f"{base}/meta", "type": "object"},
        {"properties": {"a": {"$schema": f"{base}/nested"}}},
        {"$ref": f"{base}/ref"},
        {"$id": f"{base}/b/", "$ref": "other.json"},
        {"$defs": {"x": {"$id": f"{base}/x/", "$ref": "#/y"}}},
        {"items": {"$dynamicRef": f"{base}/dyn"}},
        {"$schema": "file:///dev/zero"},
        {"x-unknown-keyword": {"$ref": "file:///etc/passwd"}},
    ):
        fault = check_schema(schema)
        assert fault is not None and fault.startswith("/"), schema
        with pytest.raises(ValueError):
            CompiledSchema(schema)
    assert hits == []


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        (chain(70_000), f"more than {MAX_NODES} JSON values"),
        (chain(15_000), f"deeper than {MAX_CHAIN} levels"),
        (chain(MAX_CHAIN + 10), f"deeper than {MAX_CHAIN} levels"),
        (doubling(40), f"more than {MAX_EXPANDED} schema positions"),
        (nested(MAX_DEPTH), f"deeper than {MAX_DEPTH} levels"),
        (nested(10_000), f"deeper than {MAX_DEPTH} levels"),  # iterative: no RecursionError
        ({"enum": ["x" * (MAX_TEXT + 1)]}, f"more than {MAX_TEXT} characters"),
        ({"pattern": "a" * (MAX_PATTERN + 1)}, f"longer than {MAX_PATTERN}"),
        (
            {"patternProperties": {f"^{i}$": {} for i in range(MAX_PATTERNS + 1)}},
            f"more than {MAX_PATTERNS} regular expressions",
        ),
        (
            # 40 patterns behind 2 references each: 80 compiles.
            {
                "$defs": {"p": {"anyOf": [{"pattern": f"^{i}"} for i in range(40)]}},
                "allOf": [{"$ref": "#/$defs/p"}, {"$ref": "#/$defs/p"}],
            },
            f"more than {MAX_PATTERNS} regular expressions",
        ),
        ({"$ref": "#/$defs/missing"}, "names nothing"),
        ({"$ref": "#nowhere"}, "names nothing"),
    ],
)
def test_the_bounds_refuse_before_any_library_sees_the_schema(
    schema: dict[str, Any], said: str
) -> None:
    started = time.monotonic()
    fault = outside_schema_fault(schema)
    assert fault is not None and said in fault, fault
    assert time.monotonic() - started < 2
    assert check_schema(schema) == fault
    with pytest.raises(ValueError, match=r"^/"):
        CompiledSchema(schema)


def test_schemas_people_write_pass_and_recursion_is_not_a_chain() -> None:
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-z]+$"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                    "parent": {"$ref": "#"},
                },
            }
        },
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.invalid/tree",
        "$ref": "#/$defs/node",
        "properties": {"const": {"const": {"$ref": "http://data.invalid/not-a-reference"}}},
    }
    assert outside_schema_fault(tree) is None
    compiled = CompiledSchema(tree)
    deep: dict[str, Any] = {"name": "leaf"}
    for _ in range(500):
        deep = {"name": "n", "children": [deep]}
    assert compiled.is_valid(deep)
    assert not compiled.is_valid({"name": "X"})
    anchored = {"$defs": {"s": {"$anchor": "str", "type": "string"}}, "items": {"$ref": "#str"}}
    assert outside_schema_fault(anchored) is None
    assert not CompiledSchema(anchored).is_valid([1])
    # Reach the limits, one at a time: still admitted.
    assert outside_schema_fault(chain(MAX_CHAIN // 2 - 2)) is None
    assert outside_schema_fault(nested(MAX_DEPTH - 2)) is None
    assert outside_schema_fault(doubling(10)) is None  # 1024 paths


def test_a_schema_at_every_limit_compiles_within_a_bounded_time() -> None:
    """The most expensive regexes the size limits admit, as many as admitted, behind a
    reference graph near the expansion budget: check plus compile stay within seconds."""
    worst = ["\\w{300}", "(?:\\b\\w\\b){100}", "\\d{1,500}"]
    patterns = [worst[i % len(worst)] + f"{i}" for i in range(MAX_PATTERNS)]
    schema: dict[str, Any] = {
        **doubling(10),
        "properties": {f"p{i}": {"type": "string", "pattern": p} for i, p in enumerate(patterns)},
    }
    assert outside_schema_fault(schema) is None
    started = time.monotonic()
    assert check_schema(schema) is None
    CompiledSchema(schema)
    took = time.monotonic() - started
    assert took < 5, took


def test_every_packs_schemas_pass_the_gate_at_load() -> None:
    """A third-party pack (and so an MCP tool, which loads as one): refused at load."""
    cases = {
        "test.chain": chain(20_000),
        "test.fetching": {"$schema": "http://127.0.0.1:9/meta"},
        "test.backtracking": {"properties": {"x": {"pattern": "^(a+)+\\1$"}}},
    }
    for name, schema in cases.items():
        registry = Registry()
        with pytest.raises(PluginLoadError) as caught:
            registry.register(make_pack(name, input_schema=schema), "acme.plugin")
        assert "input schema: /" in caught.value.reason, caught.value.reason
    registry = Registry()
    registry.register(make_pack("test.fine", input_schema=chain(50)), "acme.plugin")
    assert "test.fine" in registry


def test_the_gate_is_iterative() -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        assert outside_schema_fault(nested(5_000)) is not None
        assert outside_schema_fault(chain(MAX_CHAIN + 1)) is not None
    finally:
        sys.setrecursionlimit(limit)


def test_a_check_that_would_hold_the_server_is_refused_before_it_runs() -> None:
    """2**10 paths through references under ``items``: on main a 200,000-value array took
    8 s to check, the GIL held throughout (measured: a ticker thread ran twice)."""
    paths = doubling(10)
    compiled = CompiledSchema({"$defs": paths["$defs"], "items": {"$ref": "#/$defs/0"}})
    body = ["x"] * 200_000
    started = time.monotonic()
    fault = compiled.cost_fault(body, 1_000_000)
    assert fault is not None and "more than 50000000 steps" in fault
    assert time.monotonic() - started < 1
    # The same schema over a small body, and a plain schema over a large one: checked.
    assert compiled.cost_fault(["x"] * 1_000, 5_000) is None
    plain = CompiledSchema({"items": {"type": "object", "properties": {"a": {"type": "integer"}}}})
    rows = [{"a": i, "b": "y"} for i in range(200_000)]
    assert plain.cost_fault(rows, 4_000_000) is None
    assert plain.is_valid(rows)
