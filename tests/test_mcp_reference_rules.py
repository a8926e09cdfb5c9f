"""The reference MCP servers' common failures reach a declared code (issue 38, item 3).

The live tests wrap the installed servers (mcp-server-git and mcp-server-time from PyPI,
@modelcontextprotocol/server-filesystem from npm) and provoke each failure for real. The
table test holds texts captured from servers the test machine does not install
(server-memory 2026.8.31, run once by hand; mcp-server-fetch, from its source), through the
same classification the live calls use.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp_source_support import FILESYSTEM_JS, make_repo, node, require_npm_servers

from control_plane._features.mcp.source.config import ToolVocabulary
from control_plane._features.mcp.source.failures import (
    INTERNAL_ERROR_CODE,
    McpToolFailure,
    from_is_error,
    from_jsonrpc,
)
from control_plane._features.mcp.source.rules import BUILTIN_CODES, BUILTIN_RULES, DEFAULT_CODES
from control_plane._kernel.errors import PackError
from control_plane._kernel.vocabulary import WELL_KNOWN_PACK_CODES
from control_plane._runtime.runtime import Runtime, RuntimeConfig, build_runtime

VOCAB = ToolVocabulary(
    codes=DEFAULT_CODES, docs=BUILTIN_CODES, rules=BUILTIN_RULES, jsonrpc_errors={}
)

pytestmark = pytest.mark.system  # the reference MCP servers (node) and git


def _is_error(text: str) -> Any:
    return SimpleNamespace(content=[SimpleNamespace(type="text", text=text)], is_error=True)


def _code(failure: PackError | McpToolFailure) -> str:
    return failure.code if isinstance(failure, PackError) else "internal_error"


@pytest.mark.parametrize(
    ("tool", "args", "text", "code"),
    [
        # server-memory 2026.8.31, add_observations on an entity that does not exist
        ("add_observations", {}, "Entity with name ghost not found", "not_found"),
        # mcp-server-git: a bare value that is one of the arguments (KeyError-like)
        (
            "git_checkout",
            {"branch_name": "x y"},
            "Error executing tool git_checkout: 'x y'",
            "not_found",
        ),
        # a caller's path may hold any word: "timeout" here is the caller's, not the server's
        (
            "git_status",
            {"repo_path": "/tmp/timeout"},
            "Error executing tool git_status: /tmp/timeout",
            "not_found",
        ),
        # mcp-server-fetch (server.py): robots.txt refuses, a 404
        (
            "fetch",
            {},
            "The sites robots.txt (http://h/robots.txt), specifies that autonomous "
            "fetching of this page is not allowed, <useragent>x</useragent>",
            "permission_denied",
        ),
        ("fetch", {}, "Failed to fetch http://h/x - status code 404", "not_found"),
    ],
)
def test_captured_texts(tool: str, args: dict[str, Any], text: str, code: str) -> None:
    assert _code(from_is_error(VOCAB, "s", tool, _is_error(text), args)) == code
    # the same text as a JSON-RPC internal error (how mcp-server-fetch raises McpError)
    failure = from_jsonrpc(VOCAB, "s", tool, INTERNAL_ERROR_CODE, text, args)
    assert _code(failure) == code


def test_a_bare_text_that_is_not_an_argument_stays_unclassified() -> None:
    failure = from_is_error(
        VOCAB,
        "s",
        "git_status",
        _is_error("Error executing tool git_status: /other"),
        {"repo_path": "/mine"},
    )
    assert isinstance(failure, McpToolFailure)


def test_already_exists_is_a_documented_well_known_code() -> None:
    entry = WELL_KNOWN_PACK_CODES["already_exists"]
    assert entry["retryable"] is False
    assert BUILTIN_CODES["already_exists"].recovery_hint == entry["recovery_hint"]
    assert "already_exists" in DEFAULT_CODES


# -- live ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Runtime, Path]]:
    require_npm_servers()
    base = tmp_path_factory.mktemp("reference")
    make_repo(base / "repo")
    root = base / "root"
    root.mkdir()
    (root / "a.txt").write_text("hi\n")
    py = json.dumps(sys.executable)
    config = base / "packctl-mcp.toml"
    config.write_text(
        f"""
[servers.git]
command = {py}
args = ["-m", "mcp_server_git"]
prefix = "git"

[servers.time]
command = {py}
args = ["-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]
prefix = "time"

[servers.fs]
command = {json.dumps(node())}
args = [{json.dumps(str(FILESYSTEM_JS))}, {json.dumps(str(root))}]
prefix = "fs"
"""
    )
    runtime = build_runtime(
        RuntimeConfig(builtins=False, entry_points=False, mcp_config=str(config))
    )
    try:
        assert not runtime.registry.failures, runtime.registry.failures
        yield runtime, base
    finally:
        runtime.close()


def _fails(runtime: Runtime, pack: str, doc: dict[str, Any]) -> tuple[str, str]:
    outcome = runtime.invoker.invoke_sync(pack, doc, timeout=60)
    assert outcome.error is not None, outcome.result
    return outcome.error.code, outcome.error.message


def test_git_not_a_repository_and_no_such_path(live: tuple[Runtime, Path]) -> None:
    """Before: `Error executing tool git_status: <path>` was internal_error."""
    runtime, base = live
    for path in (base / "root", base / "absent"):
        code, message = _fails(runtime, "git.git_status", {"repo_path": str(path)})
        assert code == "not_found", message
        assert str(path) in message


def test_git_branch_already_exists(live: tuple[Runtime, Path]) -> None:
    """Before: "Cannot create branch 'x': refs/heads/x already exists" was internal_error."""
    runtime, base = live
    doc = {"repo_path": str(base / "repo"), "branch_name": "topic"}
    assert runtime.invoker.invoke_sync("git.git_create_branch", doc, timeout=60).error is None
    code, message = _fails(runtime, "git.git_create_branch", doc)
    assert code == "already_exists", message
    assert "already exists" in message
    missing = {"repo_path": str(base / "repo"), "branch_name": "t2", "base_branch": "nope"}
    assert _fails(runtime, "git.git_create_branch", missing)[0] == "not_found"
    added = {"repo_path": str(base / "repo"), "files": ["missing.txt"]}
    assert _fails(runtime, "git.git_add", added)[0] == "not_found"


def test_filesystem_exists_and_wrong_kind(live: tuple[Runtime, Path]) -> None:
    runtime, base = live
    a = str(base / "root" / "a.txt")
    assert _fails(runtime, "fs.create_directory", {"path": a})[0] == "already_exists"
    moved = {"source": a, "destination": a}
    assert _fails(runtime, "fs.move_file", moved)[0] == "already_exists"
    assert _fails(runtime, "fs.list_directory", {"path": a})[0] == "invalid_arguments"
    assert _fails(runtime, "fs.read_text_file", {"path": str(base / "root")})[0] == (
        "invalid_arguments"
    )
    edit = {"path": a, "edits": [{"oldText": "zzz", "newText": "y"}]}
    assert _fails(runtime, "fs.edit_file", edit)[0] == "not_found"


def test_time_failures(live: tuple[Runtime, Path]) -> None:
    runtime, _ = live
    code, _ = _fails(runtime, "time.get_current_time", {"timezone": "Mars/Olympus"})
    assert code == "invalid_arguments"
    doc = {"source_timezone": "Etc/UTC", "time": "25:99", "target_timezone": "Europe/Paris"}
    assert _fails(runtime, "time.convert_time", doc)[0] == "invalid_arguments"


def test_the_docs_example_for_git_is_the_real_text() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "mcp.md").read_text()
    assert "Error executing tool git_status: /srv/not-a-repo" in text
    assert "already_exists" in text
