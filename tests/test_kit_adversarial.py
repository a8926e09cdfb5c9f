"""The author kit against careless and hostile plugins: real ``packctl`` processes.

``packctl check`` is what CI runs on a pack repository: exit 0 means "conforms". A plugin
must not be able to make it exit 0 by ending the process that checks it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from server_support import PACKCTL, subprocess_env

from control_plane import Pack, hookimpl
from control_plane.testing import ConformanceError, PackKit, PackTarget

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

GOOD_PACK = """
from control_plane import Pack, hookimpl

OUTPUT = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["not_found"]}, "message": {"type": "string"}},
            "required": ["code"],
        },
    },
}


def handle(doc, ctx):
    return {}


@hookimpl
def register_packs(register):
    register(Pack(name="acme.good", version="1.0.0", summary="A good pack.",
                  input_schema={"type": "object"}, output_schema=OUTPUT, handler=handle))
"""

EXITING_PLUGINS = [
    pytest.param("import sys\nsys.exit(0)\n", "SystemExit", id="exit-0-at-import"),
    pytest.param(
        "import argparse\nargparse.ArgumentParser().parse_args(['--help'])\n",
        "SystemExit",
        id="argparse-help-at-import",
    ),
    pytest.param(
        GOOD_PACK.replace(
            "def register_packs(register):\n",
            "def register_packs(register):\n    raise SystemExit(0)\n",
        ),
        "register_packs raised SystemExit",
        id="exit-0-in-register_packs",
    ),
]


def _packctl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PACKCTL, *args],
        cwd=cwd,
        env=subprocess_env(CAPABILITY_PACKS_PLUGINS="exiting_plugin,good_plugin"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(("source", "expected"), EXITING_PLUGINS)
def test_a_plugin_that_exits_fails_the_check_instead_of_passing_it(
    tmp_path: Path, source: str, expected: str
) -> None:
    """``sys.exit(0)`` (or an argparse ``--help``) at import or in ``register_packs``
    ended ``packctl check`` with exit 0 and no output: a pass. It is a broken plugin: it
    is reported and the check fails (1), the other plugins still load."""
    (tmp_path / "exiting_plugin.py").write_text(source, encoding="utf-8")
    done = _packctl("check", "exiting_plugin.py", cwd=tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "plugin 'exiting_plugin'" in done.stdout
    assert expected in done.stdout
    assert "conformance FAILED" in done.stdout

    # The runtime's own plugin loading (serve, list, call) reports it and goes on.
    (tmp_path / "good_plugin.py").write_text(GOOD_PACK, encoding="utf-8")
    listed = _packctl(
        "list",
        "--local",
        "--plugin",
        "exiting_plugin.py",
        "--plugin",
        "good_plugin.py",
        "--output",
        "json",
        cwd=tmp_path,
    )
    assert listed.returncode == 1, listed.stderr  # listed, and the failure exits 1
    assert "acme.good" in listed.stdout
    assert expected in listed.stdout


# -- a hand-written validation field ----------------------------------------------------


def _validation_pack(validation: dict[str, Any]) -> object:
    class Plugin:
        @hookimpl
        def register_packs(self, register: Any) -> None:
            register(
                Pack(
                    name="kit.validates",
                    version="1.0.0",
                    summary="Writes its validation field by hand.",
                    input_schema={"type": "object"},
                    output_schema={
                        "type": "object",
                        "properties": {
                            "error": {
                                "type": "object",
                                "properties": {"code": {"enum": ["not_found"]}},
                            },
                            "validation": {"type": "object"},
                        },
                    },
                    handler=lambda doc, ctx: {"validation": validation},
                )
            )

    return Plugin()


@pytest.mark.parametrize(
    ("validation", "said", "worst"),
    [
        ({"status": "fail", "checks": []}, "fail", "pass"),
        (
            {"status": "fail", "checks": [{"id": "size", "severity": "warn", "message": "big"}]},
            "fail",
            "warn",
        ),
        (
            {"status": "pass", "checks": [{"id": "size", "severity": "fail", "message": "big"}]},
            "pass",
            "fail",
        ),
    ],
)
def test_a_validation_status_its_checks_contradict_fails_the_kit(
    validation: dict[str, Any], said: str, worst: str
) -> None:
    """The control plane derives ``status`` from the checks (the worst severity) and
    ignores the pack's own: a pack saying ``status: fail`` with no failing check passes
    ``strict`` -- and ``packctl gate`` -- with exit 0. The kit names the contradiction."""
    target = PackTarget("kit.validates", plugin=_validation_pack(validation))
    with PackKit(target) as kit, pytest.raises(ConformanceError) as info:
        kit.invoke({}, strict=True)
    message = str(info.value)
    assert f"validation.status is {said!r} but the worst severity of its checks is" in message
    assert repr(worst) in message


def test_a_consistent_validation_passes_the_kit() -> None:
    validation = {"status": "warn", "checks": [{"id": "a", "severity": "warn", "message": "m"}]}
    with PackKit(PackTarget("kit.validates", plugin=_validation_pack(validation))) as kit:
        outcome = kit.invoke({})
    assert outcome.validation is not None and outcome.validation.status == "warn"


# -- packctl new ------------------------------------------------------------------------


def test_new_into_a_path_with_spaces_checks_clean(tmp_path: Path) -> None:
    made = _packctl("new", "acme.word_count", "--dir", "my packs/acme pack", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "cd 'my packs/acme pack'" in made.stdout  # the next steps quote it
    checked = _packctl("check", "my packs/acme pack", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "conformance ok: 1 pack(s), 0 error(s)" in checked.stdout


@pytest.mark.parametrize(
    "where",
    [
        pytest.param("a-file/sub", id="under-a-file"),
        pytest.param("read-only/pack", id="read-only-parent"),
        pytest.param("a-file", id="an-existing-file"),
        pytest.param("not-empty", id="a-non-empty-directory"),
    ],
)
def test_new_where_it_cannot_write_is_one_line_and_exit_2(tmp_path: Path, where: str) -> None:
    """Nothing half-written, no traceback: one line naming the path, exit 2."""
    (tmp_path / "a-file").write_text("mine\n", encoding="utf-8")
    (tmp_path / "not-empty").mkdir()
    (tmp_path / "not-empty" / "keep.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "read-only").mkdir()
    (tmp_path / "read-only").chmod(0o500)
    if where.startswith("read-only") and os.access(tmp_path / "read-only", os.W_OK):
        pytest.skip("running as a user who can write anywhere (root)")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    try:
        done = _packctl("new", "acme.word_count", "--dir", where, cwd=tmp_path)
    finally:
        (tmp_path / "read-only").chmod(0o700)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("packctl: ") and where.split("/", maxsplit=1)[0] in line, line
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "mine\n"


# -- packctl check on an unreadable repository -------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b'[project]\nname = "caf\xe9"\n', "can't decode byte 0xe9", id="not-utf8"),
        pytest.param(
            b"x = " + b"[" * 3000 + b"]" * 3000 + b"\n", "nests too deeply", id="too-deep"
        ),
        pytest.param(b"[project\n", "not valid TOML", id="not-toml"),
    ],
)
def test_check_on_a_repository_it_cannot_read_is_exit_2(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    """A pyproject.toml that cannot be read is "nothing to check" (2) with one line, never
    a traceback and the 1 that means "a pack breaks its contract"."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "pyproject.toml").write_bytes(content)
    done = _packctl("check", "repo", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("packctl: ") and "pyproject.toml" in line and expected in line, line
