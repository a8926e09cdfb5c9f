"""``packctl mcp`` with stock MCP clients: every result matches its tool's outputSchema.

* The outputSchema ties ``ok`` to its field: ``ok: true`` needs ``result`` (and neither
  ``error`` nor ``rejected``), ``ok: false`` needs exactly one of ``error``/``rejected``.
  ``{"ok": false}`` alone no longer validates.
* The official MCP TypeScript SDK client (``@modelcontextprotocol/sdk``, what the MCP
  Inspector is built on; installed project-locally under ``tests/node``) validates every
  ``structuredContent``, errors included, against the tool's outputSchema with Ajv, and
  the test validates each again with ``jsonschema``.
* The MCP Inspector's CLI mode lists the tools and calls one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import testpacks
from server_support import PACKCTL, ROOT, subprocess_env

from control_plane._features.grpc.client import PackDescription
from control_plane._features.mcp.bridge.tools import build_tools
from control_plane._kernel.registry import Registry
from control_plane._runtime.plugins import load_registry

pytestmark = pytest.mark.system  # docs/setup.md, Test tiers

NODE_DIR = ROOT / "tests" / "node"

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("test.echo", {"a": 1}),
    ("test.findings", {"checks": [{"id": "a", "severity": "warn"}]}),
    ("test.findings", {"checks": [{"id": "a", "severity": "fail"}], "strict": True}),
    ("test.strict_input", {"name": 1}),  # rejected: invalid input
    ("test.leak", {"mode": "partial"}),
    ("test.undeclared", {}),
    *(("test.fail", {"code": c}) for c in testpacks.FAIL_CODES),
]


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (.ci/run installs nodejs)")
    if not (NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("tests/node has no node_modules: run `(cd tests/node && npm ci)` (.ci/run)")
    return node


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _schemas() -> dict[str, dict[str, Any]]:
    registry: Registry = load_registry(
        builtins=False, entry_points_=False, extra=[testpacks]
    ).registry
    descs = [PackDescription.from_loaded(p) for p in registry]
    return {name: spec.output_schema for name, spec in build_tools(descs).items()}


def test_ok_is_tied_to_result_error_or_rejected() -> None:
    schema = _schemas()["test.fail"]
    v = _validator(schema)
    error = {"code": "not_found", "message": "gone", "retryable": False}
    rejected = {"reason": "invalid_input", "message": "bad", "retryable": False}
    valid = [
        {"ok": True, "result": {}},
        {"ok": False, "error": error},
        {"ok": False, "rejected": rejected},
    ]
    invalid = [
        {"ok": False},
        {"ok": True},
        {"ok": True, "result": {}, "error": error},
        {"ok": True, "result": {}, "rejected": rejected},
        {"ok": False, "error": error, "rejected": rejected},
        {"ok": False, "error": error, "result": {}},
        {"ok": False, "error": {**error, "code": "not_declared"}},
    ]
    for doc in valid:
        assert v.is_valid(doc), doc
    for doc in invalid:
        assert not v.is_valid(doc), doc


def test_the_typescript_sdk_client_validates_every_result(tmp_path: Path) -> None:
    node = _node()
    spec = {
        "command": PACKCTL[0],
        "args": [*PACKCTL[1:], "mcp", "--local", "--plugin", "testpacks"],
        "env": subprocess_env(),
        "cwd": str(ROOT),
        "calls": [[name, args] for name, args in CALLS],
    }
    proc = subprocess.run(
        [node, str(NODE_DIR / "mcp_validate.js"), json.dumps(spec)],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    schemas = {t["name"]: t["outputSchema"] for t in out["tools"]}
    assert set(schemas) >= {name for name, _ in CALLS}
    kinds: set[str] = set()
    for (name, _), call in zip(CALLS, out["calls"], strict=True):
        assert "thrown" not in call, call  # the SDK's own outputSchema check passed
        data = call["structured"]
        _validator(schemas[name]).validate(data)
        assert call["isError"] is (data["ok"] is False)
        kinds.add("result" if data["ok"] else ("error" if "error" in data else "rejected"))
    assert kinds == {"result", "error", "rejected"}


def test_the_mcp_inspector_cli_lists_and_calls_tools() -> None:
    _node()
    inspector = NODE_DIR / "node_modules" / ".bin" / "mcp-inspector"
    base = [str(inspector), "--cli", *PACKCTL, "mcp", "--local", "--plugin", "testpacks"]
    env = subprocess_env()

    def run(*args: str) -> dict[str, Any]:
        proc = subprocess.run(
            [*base, *args],
            cwd=NODE_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        data: dict[str, Any] = json.loads(proc.stdout)
        return data

    listing = run("--method", "tools/list")
    schemas = {t["name"]: t["outputSchema"] for t in listing["tools"]}
    assert "test.fail" in schemas
    failed = run(
        "--method", "tools/call", "--tool-name", "test.fail", "--tool-arg", "code=rate_limited"
    )
    assert failed["isError"] is True
    assert failed["structuredContent"]["error"]["code"] == "rate_limited"
    _validator(schemas["test.fail"]).validate(failed["structuredContent"])
    echoed = run("--method", "tools/call", "--tool-name", "test.echo", "--tool-arg", "a=1")
    assert echoed["structuredContent"]["ok"] is True
    _validator(schemas["test.echo"]).validate(echoed["structuredContent"])
