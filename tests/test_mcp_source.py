"""MCP servers as packs (control_plane._features.mcp.source), against real servers.

One `packctl serve --mcp-config` wraps mcp-server-time, mcp-server-git (PyPI),
server-filesystem and server-everything (npm, over stdio and streamable HTTP) plus a server
that cannot start; the tests call it with the real gRPC client and compare with what the
servers say when called directly with the MCP SDK.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
from child_processes import stop, tied
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_source_support import (
    EVERYTHING_JS,
    EVERYTHING_TOOLS,
    FILESYSTEM_JS,
    Serve,
    config_text,
    free_port,
    make_repo,
    node,
    require_npm_servers,
    serve_env,
    wait_for,
)
from server_support import PACKCTL

from control_plane._features.grpc.client import Client, PackCallError
from control_plane._features.mcp.source.config import McpConfigError, ToolVocabulary, load_config
from control_plane._features.mcp.source.failures import from_is_error
from control_plane._features.mcp.source.rules import BUILTIN_CODES, BUILTIN_RULES, retry_after_in
from control_plane._features.mcp.source.source import pack_name
from control_plane._kernel.errors import InvalidInput, PackError

pytestmark = [pytest.mark.system, pytest.mark.timeout(300)]

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


# -- fixtures: the servers, wrapped ----------------------------------------------------


class Wrapped:
    def __init__(self, serve: Serve, repo: Path, root: Path, http: subprocess.Popen[bytes]):
        self.serve = serve
        self.repo = repo
        self.root = root
        self.http = http
        self.client = Client(serve.target)

    def call(self, pack: str, doc: dict[str, Any], deadline: float = 60.0) -> Any:
        return self.client.invoke(pack, doc, timeout=deadline).result

    def fail(self, pack: str, doc: dict[str, Any], deadline: float = 60.0) -> PackCallError:
        with pytest.raises(PackCallError) as info:
            self.client.invoke(pack, doc, timeout=deadline)
        return info.value


def _start_http_everything(port: int, log: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        tied([node(), str(EVERYTHING_JS), "streamableHttp"]),
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env={**os.environ, "PORT": str(port)},
        start_new_session=True,
    )
    wait_for(lambda: b"listening on port" in log.read_bytes(), 60, "server-everything HTTP")
    return proc


@pytest.fixture(scope="module")
def wrapped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wrapped]:
    require_npm_servers()
    base = tmp_path_factory.mktemp("mcp_source")
    repo = make_repo(base / "repo")
    root = base / "root"
    root.mkdir()
    (root / "notes.txt").write_text("first line\nsecond line\n")
    (root / "taken").write_text("a file, not a directory\n")
    port = free_port()
    http = _start_http_everything(port, base / "everything-http.log")
    config = base / "packctl-mcp.toml"
    config.write_text(config_text(repo, root, http_url=f"http://127.0.0.1:{port}/mcp"))
    serve = Serve(config, base / "serve.log", "--log-level", "info")
    w = Wrapped(serve, repo, root, http)
    try:
        yield w
    finally:
        w.client.close()
        serve.stop()
        stop(http)


async def _direct_tools(command: str, args: list[str]) -> dict[str, Any]:
    async with (
        stdio_client(StdioServerParameters(command=command, args=args)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
    return {tool.name: tool for tool in listed.tools}


# -- every exposed tool is a pack, with the server's schemas --------------------------


@pytest.mark.parametrize(
    ("server", "prefix", "exposed"),
    [
        ("time", "time", None),
        ("git", "mcpgit", None),
        ("fs", "fs", ["read_text_file", "list_directory", "create_directory", "get_file_info"]),
        ("everything", "everything", EVERYTHING_TOOLS),
    ],
)
async def test_every_exposed_tool_is_a_pack_with_its_schemas(
    wrapped: Wrapped, server: str, prefix: str, exposed: list[str] | None
) -> None:
    commands = {
        "time": (sys.executable, ["-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]),
        "git": (sys.executable, ["-m", "mcp_server_git", "--repository", str(wrapped.repo)]),
        "fs": (node(), [str(FILESYSTEM_JS), str(wrapped.root)]),
        "everything": (node(), [str(EVERYTHING_JS), "stdio"]),
    }
    tools = await _direct_tools(*commands[server])
    names = exposed if exposed is not None else list(tools)
    listing = wrapped.client.list_packs(timeout=30)
    ours = {p.name for p in listing.packs if p.plugin == f"mcp:{server}"}
    assert ours == {pack_name(prefix, t) for t in names}
    for tool_name in names:
        tool = tools[tool_name]
        desc = wrapped.client.describe(pack_name(prefix, tool_name), timeout=30)
        expected_input = dict(tool.input_schema)
        expected_input.setdefault("type", "object")
        assert desc.input_schema == expected_input
        enum = desc.output_schema["properties"]["error"]["properties"]["code"]["enum"]
        assert "internal_error" in enum
        assert set(enum) == set(desc.vocabulary)
        if tool.output_schema:
            for key, node_ in tool.output_schema.get("properties", {}).items():
                assert desc.output_schema["properties"][key] == node_
        else:
            assert set(desc.output_schema["properties"]) >= {"content", "text"}
        assert wrapped.client.health(desc.name) == "SERVING"


def test_server_that_cannot_start_is_a_load_failure_while_builtins_serve(
    wrapped: Wrapped,
) -> None:
    listing = wrapped.client.list_packs(timeout=30)
    failures = [f for f in listing.failures if f.plugin == "mcp:broken"]
    assert len(failures) == 1
    reason = failures[0].reason
    # Names the config entry: file, line and key.
    assert "packctl-mcp.toml:" in reason and "servers.broken" in reason
    assert "did not start" in reason
    assert not [p for p in listing.packs if p.name.startswith("broken.")]
    # The built-in packs load and serve beside the MCP ones.
    names = listing.names()
    assert {"av.validate", "git.ls_remote", "http.fetch"} <= set(names)
    assert wrapped.client.health("git.ls_remote") == "SERVING"
    with pytest.raises(PackCallError) as info:
        wrapped.client.invoke(
            "git.ls_remote", {"url": str(wrapped.repo / "missing.git")}, timeout=60
        )
    # The pack answered: a local repository needs an fs.read grant (docs/grants.md).
    assert info.value.code == "not_permitted"


# -- mcp-server-time -------------------------------------------------------------------


def restarted(wrapped: Wrapped, marker: str, old_pid: int, pack: str) -> None:
    """Wait (bounded) for a new server process and its pack back to SERVING."""
    wait_for(
        lambda: (
            wrapped.serve.children(marker) not in ([], [old_pid])
            and wrapped.client.health(pack) == "SERVING"
        ),
        60,
        f"{marker} restarted",
    )


def test_time_success_and_typed_failures(wrapped: Wrapped) -> None:
    now = wrapped.call("time.get_current_time", {"timezone": "Europe/Paris"})
    assert now["timezone"] == "Europe/Paris"
    assert "datetime" in now  # the tool's structured content, checked against outputSchema

    # A config rule: the server's prose -> the declared pack code.
    bad_zone = wrapped.fail("time.get_current_time", {"timezone": "Mars/Olympus_Mons"})
    assert bad_zone.code == "unknown_timezone"
    assert bad_zone.status == grpc.StatusCode.FAILED_PRECONDITION
    assert bad_zone.envelope.recovery_hint.startswith("Use an IANA name")

    # A built-in rule: "Invalid time format" -> invalid_arguments.
    bad_time = wrapped.fail(
        "time.convert_time",
        {"source_timezone": "Etc/UTC", "time": "25:99", "target_timezone": "Europe/Paris"},
    )
    assert bad_time.code == "invalid_arguments"
    assert bad_time.status == grpc.StatusCode.FAILED_PRECONDITION

    # The tool's inputSchema is checked by the control plane before any call.
    with pytest.raises(InvalidInput):
        wrapped.client.invoke("time.get_current_time", {"timezone": 7}, timeout=30)


def test_time_server_killed_is_unavailable_then_restarted(wrapped: Wrapped) -> None:
    [pid] = wrapped.serve.children("mcp_server_time")
    os.kill(pid, signal.SIGKILL)
    gone = wrapped.fail("time.get_current_time", {"timezone": "Etc/UTC"})
    assert gone.code == "server_unavailable"
    assert gone.status == grpc.StatusCode.UNAVAILABLE
    assert gone.retryable
    restarted(wrapped, "mcp_server_time", pid, "time.get_current_time")
    assert wrapped.call("time.get_current_time", {"timezone": "Etc/UTC"})["timezone"] == "Etc/UTC"


# -- mcp-server-git --------------------------------------------------------------------


def test_git_success_and_typed_failures(wrapped: Wrapped) -> None:
    repo = str(wrapped.repo)
    status = wrapped.call("mcpgit.git_status", {"repo_path": repo})
    assert "working tree clean" in status["text"]

    outside = wrapped.fail("mcpgit.git_status", {"repo_path": str(wrapped.root)})
    assert outside.code == "permission_denied"
    assert outside.status == grpc.StatusCode.FAILED_PRECONDITION

    missing = wrapped.fail("mcpgit.git_show", {"repo_path": repo, "revision": "f00dfeed"})
    assert missing.code == "not_found"
    assert missing.status == grpc.StatusCode.NOT_FOUND

    flag = wrapped.fail("mcpgit.git_diff", {"repo_path": repo, "target": "--output=/tmp/x"})
    assert flag.code == "invalid_arguments"

    with pytest.raises(InvalidInput):  # missing required repo_path: refused before the call
        wrapped.client.invoke("mcpgit.git_status", {}, timeout=30)


# -- server-filesystem -----------------------------------------------------------------


def test_filesystem_success_and_typed_failures(wrapped: Wrapped) -> None:
    root = wrapped.root
    read = wrapped.call("fs.read_text_file", {"path": str(root / "notes.txt")})
    assert read["content"] == "first line\nsecond line\n"

    missing = wrapped.fail("fs.read_text_file", {"path": str(root / "absent.txt")})
    assert missing.code == "not_found"
    assert missing.status == grpc.StatusCode.NOT_FOUND

    outside = wrapped.fail("fs.read_text_file", {"path": "/etc/hostname"})
    assert outside.code == "permission_denied"
    assert outside.status == grpc.StatusCode.FAILED_PRECONDITION

    both = wrapped.fail(
        "fs.read_text_file", {"path": str(root / "notes.txt"), "head": 1, "tail": 1}
    )
    assert both.code == "invalid_arguments"

    with pytest.raises(InvalidInput):  # head must be a number: the tool's inputSchema
        wrapped.client.invoke(
            "fs.read_text_file", {"path": str(root / "notes.txt"), "head": "x"}, timeout=30
        )


def test_filesystem_text_is_scrubbed_and_unclassified_text_never_travels(
    wrapped: Wrapped,
) -> None:
    # A secret in the server's failure text is scrubbed from the typed message.
    secret_path = wrapped.root / f"token={SECRET}.txt"
    leaked = wrapped.fail("fs.read_text_file", {"path": str(secret_path)})
    assert leaked.code == "not_found"
    assert SECRET not in leaked.envelope.message
    assert "ENOENT" in leaked.envelope.message or "no such file" in leaked.envelope.message

    # "EEXIST" is already_exists (issue 38; it was internal_error before the built-in rule).
    # Unclassified text never travelling is tests/test_mcp_hostile.py's secret_error case.
    exists = wrapped.fail("fs.create_directory", {"path": str(wrapped.root / "taken")})
    assert exists.code == "already_exists"
    assert exists.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "EEXIST" in exists.envelope.message


# -- server-everything (stdio and streamable HTTP) -------------------------------------


def test_everything_success_deadline_and_kill_mid_call(wrapped: Wrapped) -> None:
    assert wrapped.call("everything.echo", {"message": "hi"})["text"] == "Echo: hi"
    assert "3" in wrapped.call("everything.get_sum", {"a": 1, "b": 2})["text"]
    weather = wrapped.call("everything.get_structured_content", {"location": "Chicago"})
    assert "temperature" in weather  # structured content, checked against outputSchema

    with pytest.raises(InvalidInput):
        wrapped.client.invoke("everything.get_sum", {"a": "one", "b": 2}, timeout=30)

    # The caller's deadline cancels the MCP call: timeout, and the server goes on serving.
    late = wrapped.fail(
        "everything.trigger_long_running_operation", {"duration": 30, "steps": 3}, deadline=2.0
    )
    assert late.code == "timeout"
    assert late.status == grpc.StatusCode.DEADLINE_EXCEEDED
    assert wrapped.call("everything.echo", {"message": "still here"})["text"].endswith("here")

    # Killed mid-call: the call in flight ends as server_unavailable.
    [pid] = wrapped.serve.children(str(EVERYTHING_JS) + " stdio")
    errors: list[PackCallError] = []

    def long_call() -> None:
        try:
            wrapped.client.invoke(
                "everything.trigger_long_running_operation",
                {"duration": 60, "steps": 2},
                timeout=90,
            )
        except PackCallError as exc:
            errors.append(exc)

    caller = threading.Thread(target=long_call)
    caller.start()
    time.sleep(1.0)  # let the call reach the server (not an assertion on time)
    os.kill(pid, signal.SIGKILL)
    caller.join(60)
    assert len(errors) == 1
    assert errors[0].code == "server_unavailable"
    assert errors[0].status == grpc.StatusCode.UNAVAILABLE
    restarted(wrapped, str(EVERYTHING_JS) + " stdio", pid, "everything.echo")
    assert wrapped.call("everything.echo", {"message": "back"})["text"] == "Echo: back"


def test_everything_over_streamable_http(wrapped: Wrapped) -> None:
    assert wrapped.call("evhttp.echo", {"message": "over http"})["text"] == "Echo: over http"
    assert wrapped.client.health("evhttp.echo") == "SERVING"
    # The endpoint goes away under a call in flight: server_unavailable, not a hang until
    # the caller's deadline.
    errors: list[PackCallError] = []

    def long_call() -> None:
        try:
            wrapped.client.invoke(
                "evhttp.trigger_long_running_operation", {"duration": 60, "steps": 2}, timeout=90
            )
        except PackCallError as exc:
            errors.append(exc)

    caller = threading.Thread(target=long_call)
    caller.start()
    time.sleep(1.0)  # let the call reach the server (not an assertion on time)
    wrapped.http.kill()
    wrapped.http.wait(10)
    caller.join(80)
    assert len(errors) == 1
    assert errors[0].code == "server_unavailable", errors[0].envelope
    assert errors[0].status == grpc.StatusCode.UNAVAILABLE
    wait_for(
        lambda: wrapped.client.health("evhttp.echo") == "NOT_SERVING",
        30,
        "health NOT_SERVING once the endpoint is gone",
    )
    refused = wrapped.fail("evhttp.get_sum", {"a": 1, "b": 2})
    assert refused.code == "server_unavailable"
    assert refused.status == grpc.StatusCode.UNAVAILABLE


# -- the bridge, --local ---------------------------------------------------------------


async def test_wrapped_tool_through_packctl_mcp_shows_the_closed_enum(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    root = tmp_path / "root"
    root.mkdir()
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(config_text(repo, root, broken=False))
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "control_plane._features.cli.cli",
            "mcp",
            "--local",
            "--mcp-config",
            str(config),
        ],
        env=serve_env(CAPABILITY_PACKS_PLUGINS=""),
        cwd=str(tmp_path),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, read_timeout_seconds=120) as session,
    ):
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        tool = tools["time.get_current_time"]
        result = await session.call_tool("time.get_current_time", {"timezone": "Mars/Olympus_Mons"})
    assert tool.output_schema is not None
    schema_text = json.dumps(tool.output_schema)
    assert '"unknown_timezone"' in schema_text and '"server_unavailable"' in schema_text
    assert "unknown_timezone" in (tool.description or "")
    assert result.is_error is True
    assert result.structured_content is not None
    assert result.structured_content["error"]["code"] == "unknown_timezone"


def test_local_call_and_config_errors_exit_2(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    root = tmp_path / "root"
    root.mkdir()
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(config_text(repo, root, broken=False))
    env = serve_env(CAPABILITY_PACKS_PLUGINS="")
    base = [*PACKCTL, "call", "time.get_current_time", "--local", "--output", "json"]
    ok = subprocess.run(
        [*base, "--mcp-config", str(config), "--input", '{"timezone": "Etc/UTC"}'],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["result"]["timezone"] == "Etc/UTC"
    # The documented default path: ./packctl-mcp.toml
    typed = subprocess.run(
        [*base, "--input", '{"timezone": "Nowhere/Land"}'],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert typed.returncode == 1, typed.stderr
    assert json.loads(typed.stdout)["error"]["code"] == "unknown_timezone"
    bad = tmp_path / "bad.toml"
    bad.write_text('[servers.x]\ncommand = "true"\nprefix = "x"\ncodes = ["gone"]\n')
    refused = subprocess.run(
        [*base, "--mcp-config", str(bad)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert refused.returncode == 2
    problem = json.loads(refused.stdout)["problem"]
    assert problem["kind"] == "mcp_config"
    assert f"{bad}:4: servers.x.codes" in problem["message"]


# -- config errors name file, line and key ---------------------------------------------


HEAD = '[servers.a]\ncommand = "x"\nprefix = "a"\n'
CONFIG_ERRORS = [
    ('[servers.a]\ncommand = "x"\nurl = "http://127.0.0.1:1/mcp"\nprefix = "a"\n',
     ":1: servers.a", "not both"),
    ('[servers.a]\nprefix = "a"\n', ":1: servers.a", "needs command"),
    ('[servers.a]\ncommand = "x"\nprefix = "A-b"\n', ":3: servers.a.prefix", "does not match"),
    (HEAD + "colour = 1\n", ":4: servers.a.colour", "unknown key"),
    (HEAD + '\n[[servers.a.rules]]\nmatch = "("\ncode = "not_found"\n',
     ":6: servers.a.rules[0].match", "not a regular expression"),
    (HEAD + 'codes = ["timeout"]\n\n[[servers.a.rules]]\nmatch = "gone"\ncode = "not_found"\n',
     ":8: servers.a.rules[0].code", "not declared"),
    (HEAD + 'codes = ["my_code"]\n', ":4: servers.a.codes", "document it"),
    (HEAD + '\n[servers.a.code_docs.not_found]\ndescription = "d"\nrecovery_hint = "h"\n',
     ":5: servers.a.code_docs.not_found", "baseline"),
    (HEAD + 'tools = ["t"]\n\n[servers.a.tool.u]\nsummary = "s"\n',
     ":6: servers.a.tool.u", "not in tools"),
    ("[servers.a\n", "", "not valid TOML"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "where", "fault"), CONFIG_ERRORS)
def test_config_errors_name_file_line_and_key(
    tmp_path: Path, body: str, where: str, fault: str
) -> None:
    path = tmp_path / "packctl-mcp.toml"
    path.write_text(body)
    with pytest.raises(McpConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}{where}"), message
    assert fault in message, message


def test_rules_and_retry_after() -> None:
    declared = ("rate_limited", "timeout", "permission_denied", "invalid_arguments", "not_found")
    vocab = ToolVocabulary(
        codes=declared, docs=BUILTIN_CODES, rules=BUILTIN_RULES, jsonrpc_errors={}
    )

    def code(text: str, the: ToolVocabulary = vocab) -> str | None:
        result = SimpleNamespace(content=[SimpleNamespace(type="text", text=text)])
        failure = from_is_error(the, "s", "t", result)
        return failure.code if isinstance(failure, PackError) else None

    # the rules: the reference servers' own words
    assert code("Access denied - path outside allowed directories: /etc") == "permission_denied"
    assert code("Error executing tool x: Invalid timezone: 'No time zone found'") == (
        "invalid_arguments"
    )
    assert code("ENOENT: no such file or directory, open '/x'") == "not_found"
    # the engine: any server's words, with the vocabulary of every other failure
    assert code("Rate limit exceeded, retry after 30s") == "rate_limited"
    assert code("File not found: invalid.txt") == "not_found"
    assert code("operation timed out") == "timeout"
    assert code("Error: the account lacks permission to access this board") == "permission_denied"
    assert code("Request validation failed: page must be greater than 0") == "invalid_arguments"
    # an undeclared code is skipped, by the rules and by the engine alike
    assert code("EEXIST: file already exists") is None
    assert code("quota exceeded", ToolVocabulary(("not_found",), {}, BUILTIN_RULES, {})) is None
    # must NOT match: a caller's quoted path or value holds no words of the server's
    assert code("Error executing tool x: could not open '/tmp/timed out/x'") is None
    # builtin_rules = false: neither the rules nor the engine
    off = ToolVocabulary(declared, BUILTIN_CODES, (), {}, engine=False)
    assert code("operation timed out", off) is None
    assert retry_after_in("Rate limited; retry after 30s") == 30.0
    assert retry_after_in("try again in 2 minutes") == 120.0
    assert retry_after_in("please wait 1500 ms") == 1.5
    assert retry_after_in("slow down") is None


def test_lazy_server_starts_on_first_call_and_every_server_stops_on_shutdown(
    tmp_path: Path,
) -> None:
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"""
[servers.time]
command = {json.dumps(sys.executable)}
args = ["-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]
prefix = "time"
start = "lazy"

[servers.git]
command = {json.dumps(sys.executable)}
args = ["-m", "mcp_server_git"]
prefix = "mcpgit"
tools = ["git_status"]
"""
    )
    serve = Serve(config, tmp_path / "serve.log")
    try:
        with Client(serve.target) as client:
            # Listed (the server ran to list its tools), then stopped until the first call.
            assert "time.get_current_time" in client.list_packs(timeout=30).names()
            assert serve.children("mcp_server_time") == []
            assert client.health("time.get_current_time") == "SERVING"
            # Concurrent first calls all wait for the one start.
            with concurrent.futures.ThreadPoolExecutor(3) as pool:
                results = list(
                    pool.map(
                        lambda zone: client.invoke(
                            "time.get_current_time", {"timezone": zone}, timeout=60
                        ),
                        ["Etc/UTC", "Europe/Paris", "Asia/Tokyo"],
                    )
                )
            assert [r.result["timezone"] for r in results] == [
                "Etc/UTC",
                "Europe/Paris",
                "Asia/Tokyo",
            ]
            pids = serve.children("mcp_server_time") + serve.children("mcp_server_git")
            assert len(pids) == 2
    finally:
        log = serve.stop()
    assert serve.proc.returncode == 0, log
    assert [p for p in pids if Path(f"/proc/{p}").exists()] == []


def test_what_a_server_prints_on_stderr_reaches_ours_scrubbed(tmp_path: Path) -> None:
    """An MCP server's stderr goes through the scrubbing relay, whole lines."""
    secret = "S3cr3t-mcp-stderr-value"
    script = (
        f"echo 'mcp-42 password={secret}' >&2; printf 'mcp-42 last token={secret}' >&2; "
        f"exec {json.dumps(sys.executable)} -m mcp_server_time --local-timezone Etc/UTC"
    )
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"""
[servers.time]
command = "sh"
args = ["-c", {json.dumps(script)}]
prefix = "time"
"""
    )
    serve = Serve(config, tmp_path / "serve.log")
    try:
        with Client(serve.target) as client:
            outcome = client.invoke("time.get_current_time", {"timezone": "Etc/UTC"}, timeout=60)
            assert outcome.result["timezone"] == "Etc/UTC"
    finally:
        log = serve.stop()
    assert secret not in log
    lines = log.splitlines()
    # Each line names the server that printed it (never passes for one of ours).
    assert "[MCP server time] mcp-42 password=[REDACTED]" in lines
    assert any(line.startswith("[MCP server time] mcp-42 last token=[REDACTED]") for line in lines)


def test_gate_local_runs_wrapped_tools(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(config_text(repo, root, broken=False))
    gate = tmp_path / "packctl-gate.toml"
    gate.write_text(
        '[[steps]]\npack = "fs.get_file_info"\nartifacts = "root/*.txt"\n'
        'artifact_field = "path"\n\n'
        '[[steps]]\npack = "time.get_current_time"\ninput = {timezone = "Mars/Olympus_Mons"}\n'
    )
    run = subprocess.run(
        [*PACKCTL, "gate", str(gate), "--local", "--mcp-config", str(config), "--format", "json"],
        check=False,
        capture_output=True,
        text=True,
        env=serve_env(CAPABILITY_PACKS_PLUGINS=""),
        cwd=tmp_path,
        timeout=180,
    )
    # Both files are read through the wrapped filesystem server; the time step could not
    # run, and says why with the typed code.
    assert run.returncode == 2, run.stderr
    report = json.loads(run.stdout)
    text = json.dumps(report)
    assert text.count("fs.get_file_info") >= 2
    assert "unknown_timezone" in text


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (-32602, "Unknown tool: nope", "tool_unavailable"),
        (-32602, "Invalid arguments for tool x: bad", "invalid_arguments"),
        (-32601, "Method not found", "tool_unavailable"),
        (-32001, "Request 'tools/call' timed out", "timeout"),
        (-32000, "Connection closed", "server_unavailable"),
        (-32603, "ENOENT: no such file", "not_found"),
        (-32010, "slow down, retry after 7s", "rate_limited"),
        (-32603, "something odd happened", None),
        (-32700, "Parse error", None),
    ],
)
def test_jsonrpc_errors_map_to_declared_codes(
    code: int, message: str, expected: str | None
) -> None:
    from control_plane._features.mcp.source.config import ServerConfig
    from control_plane._features.mcp.source.failures import McpToolFailure, from_jsonrpc
    from control_plane._kernel.errors import PackError

    server = ServerConfig(
        name="s",
        file=Path("packctl-mcp.toml"),
        line=1,
        prefix="s",
        command="x",
        jsonrpc_errors={-32010: "rate_limited"},
    )
    failure = from_jsonrpc(server.vocabulary("tool"), "s", "tool", code, message)
    if expected is None:
        assert isinstance(failure, McpToolFailure)
        assert message in str(failure)  # kept for the incident store, never sent
    else:
        assert isinstance(failure, PackError)
        assert failure.code == expected
        if expected == "rate_limited":
            assert failure.retry_after == 7.0
    # Undeclared: the same failure becomes internal_error material, not a stray code.
    narrow = ServerConfig(
        name="s", file=Path("f"), line=1, prefix="s", command="x", codes=("not_found",)
    )
    other = from_jsonrpc(narrow.vocabulary("tool"), "s", "tool", code, message)
    assert isinstance(other, McpToolFailure) or other.code == "not_found"


def test_restarts_back_off_while_the_server_keeps_failing(tmp_path: Path) -> None:
    # A real server behind a wrapper that refuses to start again while `broken` exists.
    marker = tmp_path / "broken"
    wrapper = tmp_path / "time-server.sh"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{marker}" ]; then echo "refusing to start" >&2; exit 3; fi\n'
        f'exec "{sys.executable}" -m mcp_server_time --local-timezone Etc/UTC\n'
    )
    wrapper.chmod(0o755)
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f'[servers.time]\ncommand = "{wrapper}"\nprefix = "time"\n'
        "health_interval = 0.3\nrestart_backoff = 0.2\nrestart_backoff_max = 0.8\n"
    )
    serve = Serve(config, tmp_path / "serve.log")
    try:
        with Client(serve.target) as client:
            [pid] = serve.children("mcp_server_time")
            marker.write_text("")
            os.kill(pid, signal.SIGKILL)
            wait_for(
                lambda: serve.log.read_text().count("restarting in 0.8s") >= 2,
                60,
                "restart attempts up to the maximum delay",
            )
            assert client.health("time.get_current_time") == "NOT_SERVING"
            with pytest.raises(PackCallError) as info:
                client.invoke("time.get_current_time", {"timezone": "Etc/UTC"}, timeout=30)
            assert info.value.code == "server_unavailable"
            marker.unlink()
            wait_for(lambda: client.health("time.get_current_time") == "SERVING", 60, "recovery")
            ok = client.invoke("time.get_current_time", {"timezone": "Etc/UTC"}, timeout=30)
            assert ok.result["timezone"] == "Etc/UTC"
    finally:
        log = serve.stop()
    delays = re.findall(r"restarting in ([0-9.]+)s", log)
    # Doubling from restart_backoff, capped at restart_backoff_max.
    assert delays[:4] == ["0.2", "0.4", "0.8", "0.8"], delays


def test_isolation_leaves_mcp_packs_to_their_server(tmp_path: Path) -> None:
    from control_plane._features.isolation.isolation import IsolationError
    from control_plane._runtime.runtime import RuntimeConfig, build_runtime

    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"[servers.time]\ncommand = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcp_server_time"]\nprefix = "time"\n'
    )
    base = RuntimeConfig(builtins=False, entry_points=False, mcp_config=str(config))
    with build_runtime(replace(base, isolate=("all",))) as runtime:
        assert "time.get_current_time" in runtime.registry
        assert "time.get_current_time" not in runtime.isolated
        outcome = runtime.invoker.invoke_sync("time.get_current_time", {"timezone": "Etc/UTC"})
        assert outcome.error is None
    with pytest.raises(IsolationError, match="MCP server time"):
        build_runtime(replace(base, isolate=("time.get_current_time",)))


# -- grants hold the server's process (issue 42) -------------------------------------------


def test_a_granted_mcp_server_is_held_to_its_grant(tmp_path: Path) -> None:
    """The operator grants the fs tools ``fs.read`` of one directory; the server itself was
    told a wider one. On main the grant was accepted and nothing enforced it: the server read
    a file outside. Now the server's process runs confined to the grant (Landlock)."""
    require_npm_servers()
    granted, outside = tmp_path / "granted", tmp_path / "outside"
    granted.mkdir()
    outside.mkdir()
    (granted / "notes.txt").write_text("granted notes\n")
    (outside / "secret.txt").write_text("OUTSIDE-THE-GRANT\n")
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"""
[servers.fs]
command = {json.dumps(node())}
args = [{json.dumps(str(FILESYSTEM_JS))}, {json.dumps(str(tmp_path))}]
prefix = "fs"
tools = ["read_text_file", "list_directory"]
"""
    )
    # The server's own installation is read too: it is part of what the grant must say.
    install = os.path.realpath(FILESYSTEM_JS.parents[3])
    grants = [
        arg
        for pack in ("fs.read_text_file", "fs.list_directory")
        for root in (granted, install)
        for arg in ("--grant", f"{pack}:fs.read={root}")
    ]
    serve = Serve(config, tmp_path / "serve.log", *grants)
    try:
        with Client(serve.target) as client:
            done = client.invoke(
                "fs.read_text_file", {"path": str(granted / "notes.txt")}, timeout=60
            )
            assert "granted notes" in json.dumps(done.result)
            try:
                leaked = client.invoke(
                    "fs.read_text_file", {"path": str(outside / "secret.txt")}, timeout=60
                )
            except PackCallError as exc:
                assert "OUTSIDE-THE-GRANT" not in str(exc.envelope)
            else:
                assert "OUTSIDE-THE-GRANT" not in json.dumps(leaked.result)
    finally:
        log = serve.stop()
    assert "Landlock" in log, log


def test_a_grant_an_mcp_server_cannot_be_held_to_is_refused(tmp_path: Path) -> None:
    """Different grants to two tools of one server (one process) cannot both hold: the
    server does not start, and start-up says why."""
    require_npm_servers()
    config = tmp_path / "packctl-mcp.toml"
    config.write_text(
        f"""
[servers.fs]
command = {json.dumps(node())}
args = [{json.dumps(str(FILESYSTEM_JS))}, {json.dumps(str(tmp_path))}]
prefix = "fs"
tools = ["read_text_file", "list_directory"]
"""
    )
    grants = ["--grant", f"fs.read_text_file:fs.read={tmp_path}"]
    grants += ["--grant", f"fs.list_directory:fs.read={tmp_path / 'other'}"]
    with pytest.raises(AssertionError) as caught:
        Serve(config, tmp_path / "serve.log", *grants)
    assert "grant them all the same" in str(caught.value)
