"""A user's first hour on the command line (issue 38): ``--local`` reference ids resolve,
load failures fail what they should."""

from __future__ import annotations

import json
import os
import re
import subprocess
import types
from pathlib import Path
from typing import Any

import pytest
from server_support import PACKCTL, ROOT, ServerThread, subprocess_env

from control_plane._features.cli.cli import EXIT_OK, EXIT_PACK_ERROR, EXIT_USAGE, main

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

CRASH = '{"code": "internal_error"}'
REF = re.compile(r"ref_[0-9a-f]{16}")


def _local_env(tmp_path: Path) -> dict[str, str]:
    """A user's environment: no incident database named, state under XDG_STATE_HOME."""
    env = subprocess_env(XDG_STATE_HOME=str(tmp_path / "state"))
    env.pop("CAPABILITY_PACKS_INCIDENT_DB", None)
    return env


def _packctl(env: dict[str, str], *argv: str, stdin: str | None = None) -> Any:
    return subprocess.run(
        [*PACKCTL, *argv],
        check=False,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
    )


def test_a_local_calls_reference_id_resolves(tmp_path: Path) -> None:
    """Before: `packctl incident REF` answered "unknown, or older than the store's
    retention" for every id a --local run handed out."""
    env = _local_env(tmp_path)
    done = _packctl(
        env,
        "call",
        "test.fail",
        "--local",
        "--plugin",
        "testpacks",
        "--input",
        '{"code": "internal_error"}',
    )
    assert done.returncode == EXIT_PACK_ERROR, done.stderr
    [ref] = set(REF.findall(done.stderr))
    assert f"packctl incident {ref}" in done.stderr  # says where its story is
    shown = _packctl(env, "incident", ref)
    assert shown.returncode == EXIT_OK, shown.stderr
    assert "pack: test.fail" in shown.stdout or "test.fail" in shown.stdout
    assert "RuntimeError" in shown.stdout
    assert (tmp_path / "state" / "capability-packs" / "incidents.db").exists()


def test_a_local_gate_reference_id_resolves(tmp_path: Path) -> None:
    env = _local_env(tmp_path)
    gate = tmp_path / "gate.toml"
    gate.write_text(
        '[[steps]]\nname = "boom"\npack = "test.fail"\ninput = {code = "internal_error"}\n'
    )
    done = _packctl(env, "gate", "--local", "--plugin", "testpacks", str(gate))
    refs = set(REF.findall(done.stdout + done.stderr))
    assert refs, done.stdout + done.stderr
    for ref in refs:
        assert _packctl(env, "incident", ref).returncode == EXIT_OK


def test_an_unwritable_state_dir_says_where_the_story_went(tmp_path: Path) -> None:
    env = _local_env(tmp_path)
    (tmp_path / "state").write_text("a file, not a directory")
    done = _packctl(
        env,
        "call",
        "test.fail",
        "--local",
        "--plugin",
        "testpacks",
        "--input",
        '{"code": "internal_error"}',
    )
    assert done.returncode == EXIT_PACK_ERROR
    assert "kept in memory only" in done.stderr and "CAPABILITY_PACKS_INCIDENT_DB" in done.stderr


# -- load failures ---------------------------------------------------------------------


def test_list_exits_non_zero_on_a_load_failure(
    capsys: pytest.CaptureFixture[str], server: ServerThread, tmp_path: Path
) -> None:
    """Before: `packctl list` printed the failure and exited 0."""
    assert main(["list", "--target", server.target]) == EXIT_PACK_ERROR
    out = capsys.readouterr().out
    assert "1 load failure(s):" in out and "broken on purpose" in out
    assert main(["list", "--target", server.target, "--output", "json"]) == EXIT_PACK_ERROR
    assert json.loads(capsys.readouterr().out)["load_failures"]
    (tmp_path / "bad.py").write_text("raise ImportError('nope')\n")
    assert main(["list", "--local", "--plugin", str(tmp_path / "bad.py")]) == EXIT_PACK_ERROR
    capsys.readouterr()
    assert main(["list", "--local", "--plugin", "testpacks"]) == EXIT_OK


def test_check_exits_non_zero_on_a_load_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "bad.py").write_text("raise ImportError('nope')\n")
    assert main(["check", str(tmp_path / "bad.py")]) == EXIT_PACK_ERROR
    assert "does not import: ImportError: nope" in capsys.readouterr().out


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_strict_load_refuses_to_start(tmp_path: Path, workers: str) -> None:
    """Before: no way to make `packctl serve` refuse to serve with a plugin missing."""
    (tmp_path / "bad.py").write_text("raise ImportError('nope')\n")
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    done = subprocess.run(
        [
            *PACKCTL,
            "serve",
            "--address",
            "127.0.0.1:0",
            "--strict-load",
            "--workers",
            workers,
            "--plugin",
            "testpacks",
            "--plugin",
            "bad",
            "--no-incident-db",
        ],
        check=False,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert "plugin 'bad': failed to load: ImportError: nope" in done.stderr
    assert "--strict-load" in done.stderr
    assert "packctl: serving" not in done.stderr


RARE_CODE_PACK = """
from control_plane import CodeDoc, Pack, PackError, hookimpl

def handler(doc, ctx):
    if doc.get("mode") == "rare":  # only a runtime test reaches this path
        raise PackError("mystery_code", "never declared")
    return {"ok": True}

@hookimpl
def register_packs(register):
    register(Pack(
        name="acme.rare", version="1.0.0", summary="Raises an undeclared code, rarely.",
        input_schema={"type": "object", "properties": {"mode": {"type": "string"}}},
        output_schema={"type": "object", "properties": {
            "ok": {"type": "boolean"},
            "error": {"type": "object", "properties": {"code": {"enum": ["not_found"]}}},
        }},
        handler=handler, codes={},
    ))
"""


def test_check_does_not_say_an_unqualified_ok(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Before: `conformance ok` for a pack that raises an undeclared code at run time."""
    (tmp_path / "rare.py").write_text(RARE_CODE_PACK)
    assert main(["check", str(tmp_path / "rare.py")]) == EXIT_OK
    out = capsys.readouterr().out
    assert not re.search(r"^conformance ok", out, re.M), out
    assert "static conformance ok: 1 pack(s)" in out
    assert "not checked (only the kit's runtime tests reach it): codes a handler raises" in out
    assert main(["check", str(tmp_path / "rare.py"), "--output", "json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert data["scope"] == "static" and "codes a handler raises" in data["runtime_only"]
    # ...and the kit, which runs the pack, is what catches it.
    from control_plane.testing import ConformanceError, PackKit, PackTarget

    module = types.ModuleType("rare_pack")
    exec(compile(RARE_CODE_PACK, "rare.py", "exec"), module.__dict__)
    with (
        PackKit(PackTarget("acme.rare", plugin=module)) as kit,
        pytest.raises(ConformanceError, match="undeclared code 'mystery_code'"),
    ):
        kit.invoke({"mode": "rare"})


def test_a_local_mcp_reference_id_resolves(tmp_path: Path) -> None:
    """`packctl mcp --local` (README's agent set-up) hands out reference ids too."""
    import anyio
    from mcp import Client, StdioServerParameters

    env = _local_env(tmp_path)

    async def call() -> Any:
        params = StdioServerParameters(
            command=PACKCTL[0],
            args=[*PACKCTL[1:], "mcp", "--local", "--plugin", "testpacks"],
            env=env,
            cwd=str(ROOT),
        )
        async with Client(params, read_timeout_seconds=60) as client:
            return await client.call_tool("test.fail", {"code": "internal_error"})

    result = anyio.run(call)
    assert result.is_error
    ref = result.structured_content["error"]["reference_id"]
    assert REF.fullmatch(ref)
    shown = _packctl(env, "incident", ref)
    assert shown.returncode == EXIT_OK, shown.stderr
    assert "RuntimeError" in shown.stdout
