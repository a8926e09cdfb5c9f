"""``packctl mcp``: packs as MCP tools, driven by the official SDK's own clients.

The server runs as a real subprocess (``python -m control_plane._features.cli.cli mcp``) loading
only the test plugin; the stdio tests talk to it with ``mcp.Client(StdioServerParameters)``,
one test over streamable HTTP on 127.0.0.1, one against a real gRPC control plane.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio.from_thread
import anyio.to_thread
import grpc
import pytest
import testpacks
from child_processes import stop, tied
from server_support import PACKCTL, ROOT, ServerThread, load_test_packs, subprocess_env
from tiers import starts_processes

from control_plane import Check, Pack, Reach, Result
from control_plane._features.grpc.call_errors import (
    Overloaded,
    TransportError,
    Unauthenticated,
    unreadable_answer,
)
from control_plane._features.grpc.client import PackDescription
from control_plane._features.mcp.bridge.tools import REJECTION_REASONS, build_tools, tool_name
from control_plane._kernel.outcome import Outcome
from control_plane._kernel.registry import Registry
from control_plane._kernel.rejection import Rejection
from control_plane._kernel.vocabulary import BASELINE
from control_plane._runtime.runtime import build_runtime

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

from control_plane._features.cli.backends import LocalBackend  # noqa: E402
from control_plane._features.mcp.bridge.server import Bridge  # noqa: E402

PLUGIN = ["--plugin", "testpacks"]
STDIO_LOCAL = ["mcp", "--local", *PLUGIN]
TIMEOUT = 30.0


@asynccontextmanager
async def mcp_client(*args: str) -> AsyncIterator[Client]:
    """An SDK client of a ``packctl mcp`` subprocess over stdio."""
    params = StdioServerParameters(
        command=PACKCTL[0], args=[*PACKCTL[1:], *args], env=subprocess_env(), cwd=str(ROOT)
    )
    async with Client(params, read_timeout_seconds=TIMEOUT) as client:
        yield client


class SyncClient:
    """An SDK client driven from synchronous tests, on its own event loop (a portal)."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, client: Client) -> None:
        self.portal = portal
        self.client = client

    def list_tools(self) -> Any:
        return self.portal.call(self.client.list_tools)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.portal.call(self.client.call_tool, name, arguments)


@pytest.fixture(scope="module")
@starts_processes
def local() -> Iterator[SyncClient]:
    """One ``packctl mcp --local`` over stdio, shared by the tests of this module."""
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(mcp_client(*STDIO_LOCAL)) as client,
    ):
        sync = SyncClient(portal, client)
        sync.list_tools()  # the client validates structuredContent against the listing
        yield sync


def texts(result: Any) -> list[str]:
    """Every content item of a tool result as text (non-text items as their JSON)."""
    out = []
    for item in result.content:
        out.append(item.text if item.type == "text" else item.model_dump_json())
    return out


def everything(result: Any) -> str:
    """All a caller can read of a tool result: content items and structured content."""
    return "\n".join([*texts(result), json.dumps(result.structured_content)])


def registry() -> Registry:
    return load_test_packs().registry


# -- tools/list ------------------------------------------------------------------------


@pytest.mark.system
def test_tools_carry_the_closed_vocabulary(local: SyncClient) -> None:
    reg = registry()
    listed = local.list_tools()
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == set(reg.names())  # dotted pack names are valid MCP tool names

    for loaded in reg:
        tool = tools[loaded.name]
        enum = tool.output_schema["properties"]["error"]["properties"]["code"]["enum"]
        assert enum == list(loaded.vocabulary), loaded.name
        for code in loaded.vocabulary:
            assert f"- {code} (" in tool.description, (loaded.name, code)
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema["required"] == ["ok"]
        assert tool.output_schema["properties"]["rejected"]["properties"]["reason"]["enum"] == (
            list(REJECTION_REASONS)
        )

    fail = tools["test.fail"]
    # Every code's line comes from the vocabulary (one source of advice for every adapter).
    assert "- rate_limited (retryable): " in fail.description
    for code in ("auth_failed", "not_found"):
        hint = BASELINE[code].recovery_hint.rstrip(".")
        assert f"- {code} (permanent): " in fail.description
        assert f"Do: {hint}." in fail.description
    # Pack-specific codes: their description and recovery hint, from the vocabulary.
    assert "dependency_missing (permanent): a tool the pack needs is not installed." in (
        fail.description
    )
    assert "Do: install the tool." in fail.description
    assert fail.input_schema["required"] == ["code"]

    # strict / fail_on only where the pack validates.
    findings = tools["test.findings"]
    assert findings.input_schema["properties"]["strict"]["type"] == "boolean"
    assert findings.input_schema["properties"]["fail_on"]["enum"] == ["fail", "warn"]
    assert (
        "artifact_failed"
        in findings.output_schema["properties"]["error"]["properties"]["code"]["enum"]
    )
    assert "validation" in findings.output_schema["properties"]
    for name in ("test.echo", "test.strict_input"):
        assert "strict" not in tools[name].input_schema.get("properties", {})
    assert tools["test.strict_input"].input_schema["additionalProperties"] is False


def test_control_arguments_never_collide_with_pack_fields() -> None:
    """A validating pack that already has ``strict`` and closed input gets ``_strict``."""

    def handler(doc: dict[str, Any], ctx: Any) -> Result:
        return Result({}, [Check("c", "fail", "always")])

    pack = Pack(
        "coll.ide",
        "1.0.0",
        "Has a strict field of its own.",
        {
            "type": "object",
            "properties": {"strict": {"type": "string"}, "_strict": {"type": "integer"}},
            "additionalProperties": False,
        },
        testpacks.output_schema(["not_found"]),
        handler,
        validates=True,
    )
    reg = Registry()
    reg.register(pack, "test")
    (spec,) = build_tools([PackDescription.from_loaded(reg.get("coll.ide"))]).values()
    assert spec.control.strict == "__strict"
    assert spec.control.fail_on == "fail_on"
    props = spec.input_schema["properties"]
    assert props["strict"] == {"type": "string"}  # the pack's own field, untouched
    assert props["__strict"]["type"] == "boolean"
    doc, strict, fail_on, faults = spec.split_arguments(
        {"strict": "mine", "__strict": True, "fail_on": "warn"}
    )
    assert doc == {"strict": "mine"}  # what the pack's additionalProperties: false sees
    assert (strict, fail_on, faults) == (True, "warn", [])
    _, _, _, faults = spec.split_arguments({"__strict": "yes"})
    assert [f.field for f in faults] == ["/__strict"]
    assert tool_name("av.validate") == "av.validate"
    assert tool_name("av.validate", "underscore") == "av_validate"


async def test_every_answer_matches_the_tools_output_schema() -> None:
    """In process: success, error and rejection all validate against ``outputSchema``.

    The SDK client only validates successes; the errors must match the declared shape too.
    A pack whose output schema uses local ``$ref`` keeps resolving once embedded.
    """
    import jsonschema
    from referencing import Registry as RefRegistry

    from control_plane._features.cli.backends import LocalBackend
    from control_plane._features.mcp.bridge.server import Bridge

    def refs(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
        return {"item": {"n": doc.get("n", 1)}}

    ref_schema = testpacks.output_schema(["schema_mismatch"], item={"$ref": "#/$defs/item"})
    ref_schema["$defs"] = {
        "item": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    }
    ref_schema["required"] = ["item"]
    load = load_test_packs()
    load.registry.register(
        Pack(
            "test.refs",
            "1.0.0",
            "Output with $ref.",
            {"type": "object"},
            ref_schema,
            refs,
            reach=Reach(),
        ),
        "test",
    )
    bridge = Bridge(LocalBackend(build_runtime(load=load)))
    try:
        assert await bridge.refresh()
        calls = [
            ("test.refs", {"n": 3}),
            ("test.refs", {"n": "x"}),  # output breaks its schema: schema_mismatch
            ("test.echo", {"a": 1}),
            ("test.findings", {"checks": [{"id": "a", "severity": "fail"}]}),
            ("test.findings", {"checks": [{"id": "a", "severity": "fail"}], "strict": True}),
            ("test.strict_input", {"name": 1}),
            ("test.leak", {"mode": "partial"}),
            *(("test.fail", {"code": c}) for c in testpacks.FAIL_CODES),
        ]
        for name, arguments in calls:
            data, text, is_error = await bridge.call(name, arguments)
            schema = bridge.tools[name].output_schema
            validator_cls = jsonschema.validators.validator_for(schema)
            validator_cls.check_schema(schema)
            validator_cls(schema, registry=RefRegistry()).validate(data)
            assert is_error is (data["ok"] is False)
            assert "\n" not in text or not is_error
        ok, _, _ = await bridge.call("test.refs", {"n": 3})
        assert ok["result"] == {"item": {"n": 3}}
        bad, _, _ = await bridge.call("test.refs", {"n": "x"})
        assert bad["error"]["code"] == "schema_mismatch"
        bad_schema = bridge.tools["test.refs"].output_schema
        with pytest.raises(jsonschema.ValidationError):  # the embedded $ref really applies
            jsonschema.validators.validator_for(bad_schema)(bad_schema).validate(
                {"ok": True, "result": {"item": {"n": "x"}}}
            )
    finally:
        await bridge.close()


class _Refused(LocalBackend):
    """A backend whose control plane answers every call with ``error`` (a TransportError)."""

    error: TransportError

    async def invoke(self, *args: Any, **kwargs: Any) -> Outcome:
        raise self.error


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (
            Unauthenticated(
                grpc.StatusCode.UNAUTHENTICATED,
                "bad token",
                rejection=Rejection.of("unauthenticated", "bad token"),
            ),
            "unauthenticated",
        ),
        (
            unreadable_answer("a result that is not a JSON object", grpc.StatusCode.OK),
            "adapter_failed",
        ),
        (Overloaded(grpc.StatusCode.RESOURCE_EXHAUSTED, "busy", retry_after=2.0), "overloaded"),
        (TransportError(grpc.StatusCode.UNAVAILABLE, "connection refused"), "unavailable"),
    ],
)
async def test_a_refusal_the_control_plane_answered_keeps_its_reason(
    error: TransportError, reason: str
) -> None:
    """Only a control plane that did not answer is ``unavailable``; a refusal it sent (or an
    answer the client could not use) reaches the MCP caller with its own reason."""
    backend = _Refused(build_runtime(load=load_test_packs()))
    backend.error = error
    bridge = Bridge(backend)
    try:
        assert await bridge.refresh()
        data, _, is_error = await bridge.call("test.echo", {"a": 1})
    finally:
        await bridge.close()
    assert is_error and data["rejected"]["reason"] == reason
    assert data["rejected"]["retryable"] is Rejection.of(reason, "x").retryable


# -- tools/call ------------------------------------------------------------------------


def check_rejections(local: SyncClient) -> None:
    """Unknown tool, invalid input, bad control arguments: typed, isError, one line."""
    unknown = local.call_tool("no.such_pack", {})
    invalid = local.call_tool("test.strict_input", {"name": 3, "count": -1, "extra": True})
    bad_strict = local.call_tool("test.findings", {"strict": "yes"})
    stray_strict = local.call_tool("test.strict_input", {"name": "a", "count": 1, "strict": True})

    assert unknown.is_error is True
    assert unknown.structured_content["rejected"]["reason"] == "unknown_pack"
    assert texts(unknown)[0].startswith("unknown pack: no tool 'no.such_pack'")

    rejected = invalid.structured_content["rejected"]
    assert invalid.is_error is True
    assert rejected["reason"] == "invalid_input"
    assert rejected["retryable"] is False
    fields = {v["field"] for v in rejected["violations"]}
    assert {"/name", "/count"} <= fields
    (line,) = texts(invalid)
    assert line.startswith("invalid input: ")
    assert "/name" in line
    assert "Fix the fields listed in violations" in line

    assert bad_strict.structured_content["rejected"]["violations"] == [
        {"field": "/strict", "description": "must be a boolean"}
    ]
    # No strict argument on a pack that does not validate: it is an ordinary (extra) field.
    assert stray_strict.structured_content["rejected"]["reason"] == "invalid_input"


def test_success_findings_and_rejections(local: SyncClient) -> None:
    ok = local.call_tool("test.echo", {"a": 1, "nested": {"b": [1, 2]}})
    warn = [{"id": "loudness", "severity": "warn", "message": "a bit loud"}]
    findings = local.call_tool("test.findings", {"checks": warn})
    strict_warn = local.call_tool("test.findings", {"checks": warn, "strict": True})
    strict_fail_on_warn = local.call_tool(
        "test.findings", {"checks": warn, "strict": True, "fail_on": "warn"}
    )
    failing = [*warn, {"id": "duration", "severity": "fail", "message": "too short"}]
    strict_fail = local.call_tool("test.findings", {"checks": failing, "strict": True})
    check_rejections(local)

    assert ok.is_error is False
    data = ok.structured_content
    assert data["ok"] is True
    assert data["pack"] == "test.echo"
    assert data["version"] == "1.0.0"
    assert data["result"]["echo"] == {"a": 1, "nested": {"b": [1, 2]}}
    assert json.loads(texts(ok)[0]) == data  # the text item is the same, serialised

    # Findings are data: the call succeeded; strict is not in the pack's input.
    assert findings.is_error is False
    assert findings.structured_content["result"] == {"checked": 1}
    assert findings.structured_content["validation"]["status"] == "warn"
    assert findings.structured_content["validation"]["checks"][0]["id"] == "loudness"
    assert strict_warn.is_error is False  # a warning does not fail at fail_on=fail

    for result, ids in ((strict_fail_on_warn, ["loudness"]), (strict_fail, ["duration"])):
        assert result.is_error is True
        err = result.structured_content["error"]
        assert err["code"] == "artifact_failed"
        assert err["retryable"] is False
        assert [c["id"] for c in err["checks"]] == ids
        assert result.structured_content["validation"]["checks"]  # every finding kept
        (line,) = texts(result)
        assert line.startswith("error artifact_failed (permanent):")
        assert ids[0] in line
        assert "\n" not in line


def test_every_code_comes_back_typed_and_nothing_leaks(local: SyncClient) -> None:
    results = {
        code: local.call_tool("test.fail", {"code": code})
        for code in [*testpacks.BASELINE_CODES, "quota_exceeded", "dependency_missing"]
    }
    leaks = [
        local.call_tool("test.leak", {"mode": mode})
        for mode in ("internal", "network", "typed", "partial")
    ]
    undeclared = local.call_tool("test.undeclared", {})
    for code, result in results.items():
        assert result.is_error is True, code
        data = result.structured_content
        assert data["ok"] is False
        assert data["pack"] == "test.fail"
        assert data["request_id"]
        err = data["error"]
        assert err["code"] == code
        assert isinstance(err["message"], str)
        expected_retryable = (
            BASELINE[code].retryable if code in BASELINE else testpacks.FAIL_DOCS[code].retryable
        )
        assert err["retryable"] is expected_retryable, code
        (line,) = texts(result)
        kind = "retryable" if expected_retryable else "permanent"
        assert line.startswith(f"error {code} ({kind}): "), line
        assert "Next: " in line
        assert "\n" not in line
        assert testpacks.SECRET not in everything(result)

    assert results["rate_limited"].structured_content["error"]["retry_after"] == 2.5
    assert "retry the same call after 2.5 s" in texts(results["rate_limited"])[0]
    internal = results["internal_error"].structured_content["error"]
    assert re.fullmatch(r"ref_[0-9a-f]+", internal["reference_id"])
    assert internal["reference_id"] in texts(results["internal_error"])[0]
    assert "unclassifiable" not in everything(results["internal_error"])
    mismatch = results["schema_mismatch"].structured_content["error"]
    assert mismatch["partial"] is True
    assert mismatch["partial_result"]["kept"] == 1
    assert "Check or refresh the credential" in texts(results["auth_failed"])[0]
    assert "install the tool" in texts(results["dependency_missing"])[0]

    # No redacted detail, and no secret planted in exception texts, in any content item.
    codes = [r.structured_content["error"]["code"] for r in leaks]
    assert codes == ["internal_error", "network_error", "network_error", "schema_mismatch"]
    assert undeclared.structured_content["error"]["code"] == "internal_error"
    for result in [*leaks, undeclared]:
        seen = everything(result)
        assert testpacks.SECRET not in seen
        for planted in ("wrapped:", "mystery_code", "Traceback"):
            assert planted not in seen


@pytest.mark.system
def test_stdout_carries_only_mcp_messages() -> None:
    """Raw JSON-RPC over the pipe: every stdout line is a protocol message; logs on stderr."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "test.fail", "arguments": {"code": "internal_error"}},
        },
    ]
    proc = subprocess.Popen(
        tied([*PACKCTL, *STDIO_LOCAL]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
        cwd=ROOT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int, Any] = {}
    for message in messages:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        if "id" in message:
            while message["id"] not in answers:
                line = proc.stdout.readline()
                assert line, "server closed stdout"
                parsed = json.loads(line)  # anything but JSON-RPC here would fail
                assert parsed["jsonrpc"] == "2.0"
                if "id" in parsed:
                    answers[parsed["id"]] = parsed
    out, err = proc.communicate(timeout=TIMEOUT)
    for line in out.decode().splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert proc.returncode == 0
    assert len(answers[2]["result"]["tools"]) == len(registry())
    call = answers[3]["result"]
    assert call["isError"] is True
    assert call["structuredContent"]["error"]["code"] == "internal_error"
    assert b"tool(s) from local over stdio" in err  # the banner went to stderr
    assert testpacks.SECRET.encode() not in out


def _raw_session(calls: list[Any]) -> dict[int, Any]:
    """``tools/call`` params sent as raw JSON-RPC over stdio; answers by id (10, 11, ...)."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    messages: list[dict[str, Any]] = [
        init,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    messages += [
        {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": params}
        for i, params in enumerate(calls)
    ]
    proc = subprocess.Popen(
        tied([*PACKCTL, *STDIO_LOCAL]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=subprocess_env(),
        cwd=ROOT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int, Any] = {}
    try:
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" in message:
                while message["id"] not in answers:
                    line = proc.stdout.readline()
                    assert line, "server closed stdout"
                    parsed = json.loads(line)
                    if "id" in parsed:
                        answers[parsed["id"]] = parsed
    finally:
        proc.stdin.close()
        proc.wait(TIMEOUT)
    return answers


@pytest.mark.system
def test_malformed_tool_calls_are_typed_results_not_protocol_errors() -> None:
    """``arguments`` that is not an object, a ``name`` that is not a string: still a
    ``CallToolResult`` with ``rejected: invalid_input`` (docs/mcp.md: no call becomes an MCP
    protocol error), scrubbed; the SDK alone answered ``-32602 Invalid request parameters``."""
    calls: list[Any] = [
        {"name": "test.echo", "arguments": [1, 2]},
        {"name": "test.echo", "arguments": f"password={testpacks.SECRET}"},
        {"name": "test.echo", "arguments": 7},
        {"name": 5, "arguments": {}},
        {"arguments": {}},
        {"name": ["test.echo"]},
    ]
    answers = _raw_session(calls)
    fields = ["/", "/", "/", "/name", "/name", "/name"]
    for i, field in enumerate(fields):
        answer = answers[10 + i]
        assert "error" not in answer, (calls[i], answer)
        result = answer["result"]
        assert result["isError"] is True
        rejected = result["structuredContent"]["rejected"]
        assert rejected["reason"] == "invalid_input", calls[i]
        assert rejected["retryable"] is False
        assert rejected["violations"][0]["field"] == field, calls[i]
        assert result["content"][0]["text"].startswith("invalid input: ")
        assert testpacks.SECRET not in json.dumps(result)


# -- other transports and backends -----------------------------------------------------


class _Drain(threading.Thread):
    """Read a pipe to the end, keeping the lines (a child never blocks on its stderr)."""

    def __init__(self, pipe: Any) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.lines: list[str] = []

    def run(self) -> None:
        for raw in iter(self.pipe.readline, b""):
            self.lines.append(raw.decode(errors="replace"))

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for line in list(self.lines):
                if found := re.search(pattern, line):
                    return found
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} on stderr: {''.join(self.lines)}")


@contextmanager
def _http_bridge(*extra: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``packctl mcp --local`` over streamable HTTP on a free loopback port: its URL."""
    proc = subprocess.Popen(
        tied([*PACKCTL, *STDIO_LOCAL, *extra, "--http", "127.0.0.1:0"]),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env or subprocess_env(),
        cwd=ROOT,
    )
    drain = _Drain(proc.stderr)
    drain.start()
    try:
        yield drain.wait_for(r"streamable HTTP (http://127\.0\.0\.1:\d+/mcp)", TIMEOUT).group(1)
    finally:
        stop(proc, TIMEOUT)


@pytest.mark.system
async def test_streamable_http_on_loopback_with_underscore_names() -> None:
    with _http_bridge("--tool-names", "underscore") as url:
        async with Client(url, read_timeout_seconds=TIMEOUT) as client:
            listed = await client.list_tools()
            ok = await client.call_tool("test_sync_echo", {"x": "y"})
            limited = await client.call_tool("test_fail", {"code": "rate_limited"})
            invalid = await client.call_tool("test_fail", {})
    # --tool-names underscore: for agent hosts whose tool names may not contain dots.
    assert {t.name for t in listed.tools} == {n.replace(".", "_") for n in registry().names()}
    assert ok.is_error is False
    assert ok.structured_content["pack"] == "test.sync_echo"
    assert ok.structured_content["result"]["echo"] == {"x": "y"}
    assert limited.is_error is True
    assert limited.structured_content["error"]["code"] == "rate_limited"
    assert limited.structured_content["error"]["retry_after"] == 2.5
    assert invalid.structured_content["rejected"]["reason"] == "invalid_input"


@pytest.mark.system
def test_http_refuses_non_loopback_addresses() -> None:
    done = subprocess.run(
        [*PACKCTL, *STDIO_LOCAL, "--http", "0.0.0.0:0"],
        capture_output=True,
        env=subprocess_env(),
        cwd=ROOT,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 2
    assert b"not a loopback address" in done.stderr


@pytest.mark.system
async def test_target_a_real_grpc_control_plane() -> None:
    server = ServerThread(load_test_packs()).start()
    try:
        async with mcp_client("mcp", "--target", server.target) as client:
            listed = await client.list_tools()
            ok = await client.call_tool("test.echo", {"via": "grpc"})
            results = {
                code: await client.call_tool("test.fail", {"code": code})
                for code in testpacks.BASELINE_CODES
            }
            strict = await client.call_tool(
                "test.findings",
                {"checks": [{"id": "d", "severity": "fail"}], "strict": True},
            )
            invalid = await client.call_tool("test.strict_input", {"name": 1})
            leak = await client.call_tool("test.leak", {"mode": "internal"})
    finally:
        server.stop()
    assert {t.name for t in listed.tools} == set(registry().names())
    assert ok.structured_content["result"]["echo"] == {"via": "grpc"}
    for code, result in results.items():
        assert result.is_error is True
        assert result.structured_content["error"]["code"] == code
        assert result.structured_content["error"]["retryable"] is BASELINE[code].retryable
    assert results["rate_limited"].structured_content["error"]["retry_after"] == 2.5
    assert results["internal_error"].structured_content["error"]["reference_id"]
    assert strict.structured_content["error"]["code"] == "artifact_failed"
    assert strict.structured_content["error"]["checks"][0]["id"] == "d"
    assert {v["field"] for v in invalid.structured_content["rejected"]["violations"]} >= {"/name"}
    assert testpacks.SECRET not in everything(leak)
    assert all(testpacks.SECRET not in everything(r) for r in results.values())


@pytest.mark.system
async def test_unreachable_control_plane_is_typed_unavailable() -> None:
    server = ServerThread(load_test_packs()).start()
    target = server.target
    server.stop()  # a port nobody listens on any more
    async with mcp_client("mcp", "--target", target) as client:
        listed = await client.list_tools()
        result = await client.call_tool("test.echo", {})
    assert listed.tools == []
    assert result.is_error is True
    rejected = result.structured_content["rejected"]
    assert rejected["reason"] == "unavailable"
    assert rejected["retryable"] is True
    assert texts(result)[0].startswith("unavailable: ")


def test_mangled_name_collisions_are_resolved_by_pack_name_not_order() -> None:
    """Underscore naming maps ``col.a_b``, ``col_a.b`` and ``col.a.b`` alike: the pack a
    tool name stands for must not depend on the catalogue's order, nor move when a pack
    joins (a ``-2`` handed out by position pointed at another pack after a relist)."""

    def describe(*names: str) -> list[PackDescription]:
        OPEN = testpacks.OPEN_INPUT
        reg = Registry()
        for name in names:
            reg.register(
                Pack(name, "1.0.0", "x", OPEN, testpacks.output_schema(["timeout"]), dict),
                "test",
            )
        return [PackDescription.from_loaded(reg.get(n)) for n in names]

    def names(*packs: str) -> dict[str, str]:
        return {s.pack: n for n, s in build_tools(describe(*packs), "underscore").items()}

    one = names("col.a_b", "col_a.b", "col.a.b")
    assert names("col.a.b", "col_a.b", "col.a_b") == one
    assert len(set(one.values())) == 3
    assert all(name.startswith("col_a_b") for name in one.values())
    assert names("col_a.b", "col.a.b") == {p: one[p] for p in ("col_a.b", "col.a.b")}
    assert names("col.a.b", "col.y", "col_a.b", "col.a_b") == {**one, "col.y": "col_y"}
    assert names("col.a_b") == {"col.a_b": "col_a_b"}  # no collision: no suffix


def _trickle_until_closed(url: str, count: int) -> int:
    """Open ``count`` connections that send request headers one byte at a time (slowloris)
    until the server closes them, or TIMEOUT passes; the number it closed."""
    host, port = re.match(r"http://([\d.]+):(\d+)/", url).groups()  # type: ignore[union-attr]
    socks = [socket.create_connection((host, int(port)), timeout=TIMEOUT) for _ in range(count)]
    head = b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100_000
    open_ = {s: 0 for s in socks}
    closed = 0
    end = time.monotonic() + TIMEOUT
    try:
        while open_ and time.monotonic() < end:
            for sock in list(open_):
                try:
                    sock.sendall(head[open_[sock] : open_[sock] + 1])
                    open_[sock] += 1
                    sock.setblocking(False)
                    try:
                        gone = sock.recv(1) == b""
                    except BlockingIOError:
                        gone = False
                    sock.setblocking(True)
                except OSError:
                    gone = True
                if gone:
                    del open_[sock]
                    closed += 1
            time.sleep(0.05)
    finally:
        for sock in socks:
            sock.close()
    return closed


@pytest.mark.system
async def test_http_closes_connections_that_never_finish_their_headers() -> None:
    """Slowloris: 20 clients sending their headers a byte at a time held their connections
    (and descriptors) for as long as they kept trickling; uvicorn has no header timeout.
    Now each is closed once ``--header-timeout`` passes, and the bridge keeps serving."""
    with _http_bridge("--header-timeout", "0.5") as url:
        closed = await anyio.to_thread.run_sync(_trickle_until_closed, url, 20)
        async with Client(url, read_timeout_seconds=TIMEOUT) as client:
            ok = await client.call_tool("test.sync_echo", {"x": "y"})
    assert closed == 20
    assert ok.is_error is False


async def _wait_for(path: Any) -> bool:
    end = time.monotonic() + TIMEOUT
    while not path.exists() and time.monotonic() < end:
        await anyio.sleep(0.02)
    return bool(path.exists())


@pytest.mark.system
async def test_a_cancelled_call_cancels_the_packs_work_and_the_bridge_serves_on(
    tmp_path: Any,
) -> None:
    """notifications/cancelled (the SDK sends it when a call is abandoned): the pack's
    handler sees ``ctx.cancelled`` and stops, and the next call is answered."""
    marker = tmp_path / "call"
    env = {**subprocess_env(), "CAPABILITY_PACKS_PLUGINS": "testpacks,mcp_slow_packs"}
    args = [*PACKCTL[1:], *STDIO_LOCAL, "--plugin", "mcp_slow_packs"]
    params = StdioServerParameters(command=PACKCTL[0], args=args, env=env, cwd=str(ROOT))
    async with Client(params, read_timeout_seconds=TIMEOUT) as client:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await client.call_tool("test.watched", {"marker": str(marker)})

            tg.start_soon(call)
            assert await _wait_for(marker.with_suffix(".started"))
            tg.cancel_scope.cancel()
        assert await _wait_for(marker.with_suffix(".cancelled"))
        ok = await client.call_tool("test.sync_echo", {"x": "y"})
    assert ok.is_error is False
    assert not marker.with_suffix(".finished").exists()


@pytest.mark.system
async def test_an_abandoned_http_call_cancels_the_packs_work(tmp_path: Any) -> None:
    """Over streamable HTTP the SDK abandons a call by closing its request's stream (a
    disconnect mid-call): the pack sees ``ctx.cancelled`` and the bridge serves on."""
    marker = tmp_path / "call"
    env = {**subprocess_env(), "CAPABILITY_PACKS_PLUGINS": "testpacks,mcp_slow_packs"}
    with _http_bridge("--plugin", "mcp_slow_packs", env=env) as url:
        async with Client(url, read_timeout_seconds=TIMEOUT) as client:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await client.call_tool("test.watched", {"marker": str(marker)})

                tg.start_soon(call)
                assert await _wait_for(marker.with_suffix(".started"))
                tg.cancel_scope.cancel()
            assert await _wait_for(marker.with_suffix(".cancelled"))
            ok = await client.call_tool("test.sync_echo", {"x": "y"})
    assert ok.is_error is False
