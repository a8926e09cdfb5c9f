"""The real MCP servers the MCP-source tests wrap, and a `packctl serve` that wraps them.

The servers come from the registries, never fakes: ``mcp-server-time`` and ``mcp-server-git``
(PyPI, the ``dev`` extra) run as ``python -m``; ``@modelcontextprotocol/server-filesystem``
and ``server-everything`` (npm) are installed under ``tests/mcp_servers`` by ``.ci/run``
(``npm ci``) and run with ``node``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from child_processes import tied
from server_support import PACKCTL, ROOT, TESTS_DIR

NPM_DIR = TESTS_DIR / "mcp_servers" / "node_modules" / "@modelcontextprotocol"
FILESYSTEM_JS = NPM_DIR / "server-filesystem" / "dist" / "index.js"
EVERYTHING_JS = NPM_DIR / "server-everything" / "dist" / "index.js"

#: Tools of server-everything the tests expose: not gzip-file-as-resource (it fetches a URL
#: off this machine by default), not the ones that need a sampling or elicitation client.
EVERYTHING_TOOLS = ["echo", "get-sum", "get-structured-content", "trigger-long-running-operation"]


def node() -> str:
    found = shutil.which("node")
    assert found, "node is not on PATH (.ci/run installs it with the npm servers)"
    return found


def require_npm_servers() -> None:
    missing = [str(p) for p in (FILESYSTEM_JS, EVERYTHING_JS) if not p.is_file()]
    assert not missing, (
        f"npm MCP servers not installed ({', '.join(missing)}): run "
        "`(cd tests/mcp_servers && npm ci)` (.ci/run does)"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def toml_list(items: list[str]) -> str:
    return json.dumps(items)


def config_text(repo: Path, root: Path, *, broken: bool = True, http_url: str | None = None) -> str:
    """A packctl-mcp.toml wrapping the four reference servers (plus one that cannot start)."""
    py = json.dumps(sys.executable)
    text = f"""
version = 1

[servers.time]
command = {py}
args = ["-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]
prefix = "time"
codes = ["invalid_arguments", "server_unavailable", "unknown_timezone", "timeout"]
health_interval = 0.3
restart_backoff = 0.2

[servers.time.code_docs.unknown_timezone]
description = "The timezone is not an IANA timezone name."
recovery_hint = "Use an IANA name such as Europe/Paris or Etc/UTC."

[[servers.time.rules]]
match = "no time zone found"
code = "unknown_timezone"

[servers.git]
command = {py}
args = ["-m", "mcp_server_git", "--repository", {json.dumps(str(repo))}]
prefix = "mcpgit"

[servers.fs]
command = {json.dumps(node())}
args = [{json.dumps(str(FILESYSTEM_JS))}, {json.dumps(str(root))}]
prefix = "fs"
tools = ["read_text_file", "list_directory", "create_directory", "get_file_info"]

[servers.everything]
command = {json.dumps(node())}
args = [{json.dumps(str(EVERYTHING_JS))}, "stdio"]
prefix = "everything"
tools = {toml_list(EVERYTHING_TOOLS)}
health_interval = 0.3
restart_backoff = 0.2
"""
    if http_url is not None:
        text += f"""
[servers.everything_http]
url = {json.dumps(http_url)}
prefix = "evhttp"
tools = ["echo", "get-sum", "trigger-long-running-operation"]
health_interval = 0.3
restart_backoff = 0.2
"""
    if broken:
        text += """
[servers.broken]
command = "/nonexistent/bin/mcp-server-that-is-not-installed"
prefix = "broken"
"""
    return text


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    (path / "README").write_text("hello\n")
    subprocess.run(["git", "-C", str(path), "add", "README"], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "first"], check=True, env=env)
    return path


def serve_env(**extra: str) -> dict[str, str]:
    """Built-in packs plus the MCP servers; this worktree's code first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), str(TESTS_DIR), env.get("PYTHONPATH", "")) if p
    )
    env.pop("CAPABILITY_PACKS_PLUGINS", None)
    env.pop("PACKCTL_MCP_CONFIG", None)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


class Serve:
    """`packctl serve --mcp-config` on 127.0.0.1:0; stderr drained to a file."""

    def __init__(self, config: Path, log: Path, *extra: str) -> None:
        self.log = log
        self._err = log.open("w")
        self.proc = subprocess.Popen(
            tied(
                [*PACKCTL, "serve", "--address", "127.0.0.1:0", "--mcp-config", str(config), *extra]
            ),
            stdout=subprocess.DEVNULL,
            stderr=self._err,
            env=serve_env(),
            cwd=config.parent,
        )
        self.target = self._wait_target(120)

    def _wait_target(self, timeout: float) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = self.log.read_text(errors="replace")
            match = re.search(r"serving \d+ pack\(s\) on (127\.0\.0\.1:\d+)", text)
            if match:
                return match.group(1)
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise AssertionError("packctl serve did not start:\n" + self.log.read_text())

    def children(self, marker: str) -> list[int]:
        """Pids of this server's child processes whose command line contains ``marker``."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.proc.pid and marker in cmdline:
                found.append(int(entry.name))
        return found

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._err.close()
        return self.log.read_text(errors="replace")


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    """Poll ``predicate`` until true (bounded); not a timing assertion."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}")
