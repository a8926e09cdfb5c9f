"""``packctl gate`` against careless and hostile input: real ``packctl`` processes.

The packs of ``tests/gatepacks.py`` report whatever findings the gate file asks for, so the
gate's reports and exit codes are checked against hostile texts (newlines that would start
a forged GitHub workflow command, terminal escapes, NUL, ``]]>``), unencodable file names,
a stdout reader that goes away, a server that stalls, and broken gate files.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from server_support import PACKCTL, reap, subprocess_env
from test_cli import start_serve

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

HOSTILE = (
    "bad\\n::error file=src/app.py,title=forged::all good\\r\\n::add-mask::x"
    "\\u001b[2J\\u0000 ]]> <x/> \\u0007 \\u009b31m"
)


def packctl_gate(
    *args: str, cwd: Path, timeout: float = 60, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PACKCTL, "gate", *args],
        cwd=cwd,
        env=subprocess_env(CAPABILITY_PACKS_PLUGINS="gatepacks"),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def _echo_gate(path: Path, message: str = HOSTILE, *, severity: str = "fail") -> Path:
    path.write_text(
        f"""\
[[steps]]
name = "echo"
pack = "gate.echo"

[steps.input]
checks = [
  {{ id = "hostile", severity = "{severity}", message = "{message}" }},
  {{ id = "plain", severity = "warn", message = "a plain warning" }},
]
""",
        encoding="utf-8",
    )
    return path


def test_finding_text_cannot_forge_lines_or_drive_the_terminal(tmp_path: Path) -> None:
    """A finding's message is one line of printable text in every text rendering: its
    newline cannot start a forged ``::error``/``::add-mask::`` workflow command in the
    GitHub log, and escape sequences, NUL and BEL reach no terminal."""
    _echo_gate(tmp_path / "packctl-gate.toml")
    for fmt in ("text", "github", "json"):
        done = packctl_gate("--local", "--plugin", "gatepacks", "--format", fmt, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        # The text summary: stdout for text and github, stderr beside a json report.
        text = done.stderr if fmt == "json" else done.stdout
        for char in "\x1b\x00\x07\r\x9b":
            assert char not in text, (fmt, char)
        lines = text.splitlines()
        commands = [line for line in lines if line.startswith("::")]
        if fmt == "github":
            # Exactly the gate's own two annotations, the forged one only inside one.
            assert [c.split("::")[1] for c in commands] == [
                "error title=gate.echo/hostile",
                "warning title=gate.echo/plain",
            ], commands
        else:
            assert commands == []
        assert any("::error file=src/app.py,title=forged::all good" in line for line in lines)
    json.loads(done.stdout)  # the json report itself is untouched (orjson escapes)

    junit = tmp_path / "junit.xml"
    done = packctl_gate(
        "--local",
        "--plugin",
        "gatepacks",
        "--format",
        "junit",
        "--report",
        str(junit),
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    root = ET.parse(junit).getroot()  # well-formed: ]]>, < and > escaped, NUL replaced
    [failure] = root.iter("failure")
    assert "]]> <x/>" in (failure.text or "")


def _fail_gate(path: Path) -> Path:
    return _echo_gate(path, "the artifact is bad")


def test_a_reader_that_goes_away_keeps_the_verdict(tmp_path: Path) -> None:
    """``packctl gate | head`` under ``set -o pipefail`` (GitHub's bash): stdout closes
    before the report is written. The gate failed on findings: it must exit 1, never 0."""
    _fail_gate(tmp_path / "packctl-gate.toml")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte
    try:
        for fmt in ("text", "json", "github"):
            done = subprocess.run(
                [*PACKCTL, "gate", "--local", "--plugin", "gatepacks", "--format", fmt],
                cwd=tmp_path,
                env=subprocess_env(CAPABILITY_PACKS_PLUGINS="gatepacks"),
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 1, (fmt, done.stderr)
            assert "Traceback" not in done.stderr
    finally:
        os.close(write)


def test_a_file_name_that_is_not_utf8_could_not_run_and_the_rest_is_judged(
    tmp_path: Path,
) -> None:
    """A matched file whose name is not UTF-8 cannot travel in a JSON input: that artifact
    could not run (exit 2), the others are still judged, every report is written."""
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "good.bin").write_bytes(b"")
    (dist / os.fsdecode(b"caf\xe9.bin")).write_bytes(b"")
    (tmp_path / "packctl-gate.toml").write_text(
        '[[steps]]\nname = "files"\npack = "gate.echo"\nartifacts = "dist/*.bin"\n'
        'artifact_field = "path"\n',
        encoding="utf-8",
    )
    for fmt in ("text", "json", "junit", "sarif", "github"):
        report = tmp_path / f"report.{fmt}"
        done = packctl_gate(
            "--local",
            "--plugin",
            "gatepacks",
            "--format",
            fmt,
            "--report",
            str(report),
            cwd=tmp_path,
        )
        assert done.returncode == 2, (fmt, done.stderr)
        assert "Traceback" not in done.stderr
        assert "ERROR    files: dist/caf\\xe9.bin: could not run: " in done.stdout
        assert "file name is not UTF-8" in done.stdout
        assert re.search(r"files +dist/good\.bin +PASS", done.stdout), done.stdout
        text = report.read_text(encoding="utf-8")
        if fmt == "junit":
            [error] = ET.fromstring(text).iter("error")
            assert error.get("type") == "unencodable_path"
        if fmt in ("json", "sarif"):
            json.loads(text)


def test_a_crash_inside_the_gate_exits_2_never_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever goes wrong inside the gate (a bug of ours), the exit code says "could not
    run" (2): an uncaught exception would exit 1, which means "failed on findings"."""
    from control_plane._features.cli.cli import main
    from control_plane._features.gate import run

    _fail_gate(tmp_path / "packctl-gate.toml")

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug in the gate")

    monkeypatch.setattr(run, "run_one", broken)
    monkeypatch.delenv("CAPABILITY_PACKS_PLUGINS", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["gate", "--local", "--plugin", "gatepacks"]) == 2
    err = capsys.readouterr().err
    assert "packctl gate: could not run: RuntimeError: a bug in the gate" in err


def test_a_server_that_stalls_mid_gate_could_not_run_within_the_deadline(
    tmp_path: Path,
) -> None:
    """A control plane that stops answering mid-call (SIGSTOP: the socket stays open, no
    byte comes back) must not hang the gate forever: with no deadline in the gate file
    the gate's own (``--deadline``) bounds each call, and the step could not run (2)."""
    proc, target = start_serve(
        "--plugin", "gatepacks", env=subprocess_env(CAPABILITY_PACKS_PLUGINS="gatepacks")
    )
    try:
        started = tmp_path / "started"
        (tmp_path / "packctl-gate.toml").write_text(
            '[[steps]]\nname = "slow"\npack = "gate.sleep"\n'
            f'input = {{ seconds = 4, started = "{started}" }}\n',
            encoding="utf-8",
        )
        gate = subprocess.Popen(
            [*PACKCTL, "gate", "--target", target, "--deadline", "3"],
            cwd=tmp_path,
            env=subprocess_env(CAPABILITY_PACKS_PLUGINS="gatepacks"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        until = time.monotonic() + 30
        while not started.exists() and time.monotonic() < until:
            time.sleep(0.05)
        assert started.exists(), "the call never started"
        proc.send_signal(signal.SIGSTOP)  # mid-call: the pack sleeps 4 s
        try:
            out, err = gate.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            gate.kill()
            out, err = gate.communicate()
            pytest.fail(f"the gate hung on a stalled server: {out}{err}")
        assert gate.returncode == 2, err
        assert "ERROR    slow: slow: could not run: the call's deadline of 3s passed" in out
    finally:
        proc.send_signal(signal.SIGCONT)
        reap(proc)


def test_every_call_carries_a_deadline(tmp_path: Path) -> None:
    """A step without ``deadline`` still sends one: the gate's default (300 s, the
    server's own default), so no call can wait forever."""
    from control_plane._features.gate.config import DEFAULT_DEADLINE, load_gate
    from control_plane._features.gate.run import run_gate
    from control_plane._kernel.outcome import Outcome

    gate = tmp_path / "packctl-gate.toml"
    gate.write_text(
        '[[steps]]\npack = "gate.sleep"\n[[steps]]\npack = "gate.echo"\ndeadline = 7\n',
        encoding="utf-8",
    )
    seen: list[float | None] = []

    class Recorder:
        def invoke(self, name: str, payload: bytes, **kwargs: Any) -> Outcome:
            seen.append(kwargs["deadline"])
            return Outcome.from_dict(
                {"pack": name, "version": "1.0.0", "request_id": "r", "result": {}}
            )

    run_gate(load_gate(gate), Recorder(), target="t")  # type: ignore[arg-type]
    assert DEFAULT_DEADLINE == 300
    assert seen == [300, 7]
    seen.clear()
    run_gate(load_gate(gate), Recorder(), target="t", deadline=5)  # type: ignore[arg-type]
    assert seen == [5, 7]


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


BROKEN_GATE_FILES = [
    pytest.param(
        f'[[steps]]\npack = "gate.sleep"\ninput = {{ x = {_nested(3000)} }}\n'.encode(),
        "not valid TOML: nests too deeply",
        id="toml-nesting-beyond-the-parser",
    ),
    pytest.param(
        f'[[steps]]\npack = "gate.sleep"\ninput = {{ x = {_nested(260)} }}\n'.encode(),
        ":3: steps[0].input: input nests deeper than 200 levels",
        id="input-nesting-beyond-the-control-plane",
    ),
    pytest.param(
        b'[[steps]]\npack = "gate.sleep"\ndeadline = nan\n',
        ":3: steps[0].deadline: nan is not a finite number of seconds",
        id="nan-deadline",
    ),
    pytest.param(
        b'[defaults]\ndeadline = inf\n[[steps]]\npack = "gate.sleep"\n',
        ":2: defaults.deadline: inf is not a finite number of seconds",
        id="inf-deadline",
    ),
    pytest.param(
        b'[[steps]]\npack = "gate.sleep"\n' + b"# padding\n" * 500_000,
        "is 5000030 bytes: a gate file holds at most 4194304",
        id="huge-file",
    ),
    pytest.param(
        b'[[steps]]\npack = "gate.\xff"\n',
        "cannot read the gate file: 'utf-8' codec can't decode byte 0xff",
        id="not-utf8",
    ),
    pytest.param(
        b'[[steps]]\npack = "gate.sleep"\nartifactz = "x"\n[surprise]\n',
        "unknown key",
        id="unknown-keys",
    ),
    pytest.param(
        b'[[steps]]\npack = "gate.sleep"\njobs = 4\nstrict = 1\n',
        "unknown key",
        id="wrong-types",
    ),
]


@pytest.mark.parametrize(("content", "expected"), BROKEN_GATE_FILES)
def test_a_broken_gate_file_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    """Whatever the gate file holds, the gate stops before any call with exit 2 and one
    line naming the problem: never a traceback, never the 1 of an uncaught exception."""
    (tmp_path / "packctl-gate.toml").write_bytes(content)
    done = packctl_gate("--local", "--plugin", "gatepacks", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("packctl gate: bad gate file: "), line
    assert expected in line, line


def test_a_pyproject_the_gate_cannot_read_is_no_gate_file(tmp_path: Path) -> None:
    """Without FILE, the gate looks for [tool.packctl.gate] in ./pyproject.toml; one it
    cannot parse (nested past the parser) is not a gate file: exit 2, one line."""
    (tmp_path / "pyproject.toml").write_bytes(b"x = " + b"[" * 3000 + b"]" * 3000 + b"\n")
    done = packctl_gate("--local", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("packctl gate: bad gate file: no gate file"), line
