"""What the base install (``pip install capability-packs``, no extras) can do.

The ``mcp``, ``temporal``, ``otel``, ``postgres`` and ``kit`` extras bring modules the core
must not import at module level: ``packctl`` on a base install failed at import when a
module of the MCP source imported ``anyio`` at its top (caught by the newcomer check on a
fresh clone). Here a subprocess blocks every module of the extras and of the dev tools and
imports what a base install runs: the CLI, the server and the built-in packs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

#: Top-level modules that only the extras (and the dev tools) install.
EXTRAS_ONLY = (
    "mcp",
    "mcp_types",
    "anyio",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "starlette",
    "uvicorn",
    "sse_starlette",
    "temporalio",
    "opentelemetry",
    "psycopg",
    "hypothesis",
    "hypothesis_jsonschema",
    "pytest",
    "websockets",
    "requests",
    "aiohttp",
)

_SCRIPT = """
import importlib.abc
import runpy
import sys

BLOCKED = set({blocked!r})


class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: no extra)")
        return None


sys.meta_path.insert(0, _Block())
import control_plane._features.cli.cli
import control_plane._features.grpc.server
from control_plane._runtime.plugins import load_registry

result = load_registry(entry_points_=False)
names = result.registry.names()
assert names, "no built-in pack loaded"
for failure in result.registry.failures:
    print("load failure:", failure)
sys.argv = ["packctl", "--help"]
try:
    runpy.run_module("control_plane._features.cli.cli", run_name="__main__")
except SystemExit as exit:
    assert exit.code in (0, None), exit.code
print("packs:", len(names))
"""


def test_the_cli_server_and_built_in_packs_import_without_any_extra() -> None:
    script = textwrap.dedent(_SCRIPT).format(blocked=EXTRAS_ONLY)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "packs:" in done.stdout
    assert "blocked" not in done.stdout, done.stdout
