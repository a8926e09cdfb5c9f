"""``packctl gate`` end to end: real media from ffmpeg, av.validate in-process and served.

Three files come from ``ffmpeg -f lavfi``: a good one (2 s, as expected), a bad one (5 s,
far outside the 1 s tolerance) and one inside the warn band (2.5 s: beyond the 0.2 s
warn tolerance, within the 1 s tolerance). The gate must exit 1 / 0 / 0 on them, and 1
on the warn file with ``fail_on = "warn"``, locally and against a real control plane.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import Error, Failure, JUnitXml
from server_support import ROOT, ServerThread

from control_plane._features.cli.cli import main
from control_plane._features.gate.config import GateFileError, load_gate
from control_plane._features.gate.formats import _gh_command
from control_plane._features.gate.report import JobResult
from control_plane._features.gate.run import Progress, expand
from control_plane._runtime.plugins import load_registry

DATA = Path(__file__).resolve().parent / "data"
SARIF_SCHEMA = DATA / "sarif-schema-2.1.0.json"
#: Jenkins xunit junit-10.xsd's constraints (see the file's header).
JUNIT_XSD = DATA / "junit-jenkins-strict.xsd"
SARIF_SCHEMA_ID = (
    "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
)

FFMPEG = shutil.which("ffmpeg")
needs_ffmpeg = pytest.mark.skipif(
    FFMPEG is None and not os.environ.get("CI"),
    reason="ffmpeg not installed (CI installs it)",
)

EXPECT = "expect = { duration = { value = 2.0, tolerance = 1.0, warn_tolerance = 0.2 } }"


def _make(path: Path, seconds: float) -> None:
    assert FFMPEG is not None, "ffmpeg is required (CI installs it)"
    subprocess.run(
        [
            FFMPEG,
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"testsrc=duration={seconds}:size=32x32:rate=10",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            str(path),
        ],
        check=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project directory with dist/good.mp4, dist/bad/bad.mp4 and dist/warn.mp4."""
    root = tmp_path_factory.mktemp("project")
    (root / "dist" / "bad").mkdir(parents=True)
    _make(root / "dist" / "good.mp4", 2)
    _make(root / "dist" / "bad" / "bad.mp4", 5)
    _make(root / "dist" / "warn.mp4", 2.5)
    return root


@pytest.fixture(scope="module")
def served() -> Iterator[ServerThread]:
    """A real control plane serving the built-in av.validate."""
    saved = os.environ.pop("CAPABILITY_PACKS_PLUGINS", None)
    try:
        load = load_registry(builtins=True, entry_points_=False)
    finally:
        if saved is not None:
            os.environ["CAPABILITY_PACKS_PLUGINS"] = saved
    assert "av.validate" in load.registry.names()
    srv = ServerThread(load, max_workers=4).start()
    yield srv
    srv.stop()


def _gate(root: Path, artifacts: str, *, fail_on: str = "fail", name: str = "gate.toml") -> Path:
    path = root / name
    path.write_text(
        f"""\
version = 1

[[steps]]
name = "videos"
pack = "av.validate"
artifacts = "{artifacts}"
artifact_field = "path"
fail_on = "{fail_on}"
input = {{ {EXPECT} }}
""",
        encoding="utf-8",
    )
    return path


def _where(mode: str, served: ServerThread | None) -> list[str]:
    if mode == "local":
        return ["--local"]
    assert served is not None
    return ["--target", served.target]


CASES = [
    ("dist/bad/*.mp4", "fail", 1),
    ("dist/good.mp4", "fail", 0),
    ("dist/warn.mp4", "fail", 0),
    ("dist/warn.mp4", "warn", 1),
]


@pytest.mark.system
@needs_ffmpeg
@pytest.mark.parametrize("mode", ["local", "served"])
@pytest.mark.parametrize(("artifacts", "fail_on", "code"), CASES)
def test_exit_codes(
    media: Path,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    artifacts: str,
    fail_on: str,
    code: int,
) -> None:
    served = request.getfixturevalue("served") if mode == "served" else None
    gate = _gate(media, artifacts, fail_on=fail_on, name=f"gate-{mode}-{code}-{fail_on}.toml")
    assert main(["gate", str(gate), *_where(mode, served)]) == code
    out = capsys.readouterr().out
    assert f"(exit {code})" in out
    if "warn" in artifacts:
        # Warnings are shown whether or not they fail the gate.
        assert "WARN  duration" in out
        failed = any(line.startswith("FAIL ") for line in out.splitlines())
        assert failed == (fail_on == "warn")


@pytest.mark.system
@needs_ffmpeg
def test_json_has_full_outcomes_in_declaration_order(
    media: Path, served: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = _gate(media, "dist/**/*.mp4", name="gate-all.toml")
    assert (
        main(["gate", str(gate), "--target", served.target, "--jobs", "3", "--format", "json"]) == 1
    )
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "gate failed" in captured.err  # the summary moved to stderr
    assert report["gate"]["exit_code"] == 1
    assert report["gate"]["counts"] == {"pass": 1, "warn": 1, "advisory": 0, "fail": 1, "error": 0}
    by_artifact = {r["artifact"]: r for r in report["results"]}
    assert [r["artifact"] for r in report["results"]] == sorted(by_artifact)
    bad = by_artifact["dist/bad/bad.mp4"]
    assert bad["status"] == "fail"
    assert bad["outcome"]["error"]["code"] == "artifact_failed"
    assert [c["id"] for c in bad["outcome"]["error"]["checks"]] == ["duration"]
    assert bad["input"]["path"] == str(media / "dist" / "bad" / "bad.mp4")
    warn = by_artifact["dist/warn.mp4"]
    assert warn["status"] == "warn"
    assert warn["outcome"]["validation"]["checks"][0]["severity"] == "warn"
    assert by_artifact["dist/good.mp4"]["outcome"]["validation"]["status"] == "pass"


@pytest.mark.system
@needs_ffmpeg
def test_sarif_validates_against_the_official_schema(
    media: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert schema["$id"] == SARIF_SCHEMA_ID
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    (media / "dist" / "broken.mp4").write_bytes(b"not a video at all")
    try:
        gate = _gate(media, "dist/**/*.mp4", name="gate-sarif.toml")
        out = tmp_path / "reports" / "gate.sarif"
        code = main(["gate", str(gate), "--local", "--format", "sarif", "--output", str(out)])
    finally:
        (media / "dist" / "broken.mp4").unlink()
    assert code == 2  # broken.mp4 could not be judged: unreadable_media
    assert "gate could not run" in capsys.readouterr().out
    sarif = json.loads(out.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    errors = [e.message for e in validator.iter_errors(sarif)]
    assert errors == []

    run = sarif["runs"][0]
    results = run["results"]
    assert {
        (r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in results
    } == {
        ("av.validate/duration", "error", "dist/bad/bad.mp4"),
        ("av.validate/duration", "warning", "dist/warn.mp4"),
        ("gate/could-not-run", "none", "dist/broken.mp4"),
    }
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["av.validate/duration", "gate/could-not-run"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    assert rules[0]["shortDescription"]["text"] and rules[0]["fullDescription"]["text"]
    # The file that could not be judged is a notification and an "open" result (undecided,
    # level none), never a failing finding; the invocation's properties count it.
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["exitCode"] == 2
    [note] = invocation["toolExecutionNotifications"]
    assert "unreadable_media" in note["message"]["text"]
    assert note["properties"]["kind"] == "unreadable_media"
    [undecided] = [r for r in results if "broken" in json.dumps(r)]
    assert (undecided["kind"], undecided["level"]) == ("open", "none")
    assert invocation["properties"]["stepsCouldNotRun"] == 1
    assert invocation["properties"]["counts"]["error"] == 1
    assert invocation["properties"]["verdict"] == "could not run"

    # sarif-tools' summary (it reads results only) shows the step that could not run.
    summary = subprocess.run(
        [sys.executable, "-m", "sarif", "summary", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert summary.returncode == 0, summary.stderr
    assert re.search(r"none: 1\s+- gate/could-not-run step videos could not run", summary.stdout)
    assert re.search(r"error: 1\s+- av.validate/duration ", summary.stdout), summary.stdout


@pytest.mark.system
@needs_ffmpeg
@pytest.mark.parametrize("fail_on", ["fail", "warn"])
def test_junit_counts_match(
    media: Path, served: ServerThread, tmp_path: Path, fail_on: str
) -> None:
    gate = _gate(media, "dist/**/*.mp4", fail_on=fail_on, name=f"gate-junit-{fail_on}.toml")
    out = tmp_path / "junit.xml"
    argv = ["gate", str(gate), "--target", served.target, "-j", "2", "--format", "junit"]
    assert main([*argv, "--output", str(out)]) == 1
    xml = JUnitXml.fromfile(str(out))
    assert xml.tests == 3
    assert xml.failures == (2 if fail_on == "warn" else 1)
    assert xml.errors == 0
    cases = {case.name: case for suite in xml for case in suite}
    assert set(cases) == {"dist/good.mp4", "dist/bad/bad.mp4", "dist/warn.mp4"}
    assert any(isinstance(r, Failure) for r in cases["dist/bad/bad.mp4"].result)
    assert cases["dist/good.mp4"].is_passed
    warn = cases["dist/warn.mp4"]
    assert "WARN  duration" in (warn.system_out or "")  # warnings kept in system-out
    assert warn.is_passed == (fail_on == "fail")


@pytest.mark.system
@needs_ffmpeg
def test_could_not_run_is_an_error_never_a_failure(
    media: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "p"
    (project / "dist").mkdir(parents=True)
    shutil.copy(media / "dist" / "bad" / "bad.mp4", project / "dist" / "bad.mp4")
    (project / "dist" / "garbage.mp4").write_bytes(b"\x00" * 64)
    gate = _gate(project, "dist/*.mp4")
    out = tmp_path / "junit.xml"
    assert main(["gate", str(gate), "--local", "--format", "junit", "--output", str(out)]) == 2
    xml = JUnitXml.fromfile(str(out))
    assert (xml.tests, xml.failures, xml.errors) == (2, 1, 1)
    cases = {case.name: case for suite in xml for case in suite}
    [error] = cases["dist/garbage.mp4"].result
    assert isinstance(error, Error)
    assert error.type == "unreadable_media"
    assert isinstance(cases["dist/bad.mp4"].result[0], Failure)
    text = capsys.readouterr().out
    assert "could not run: unreadable_media" in text


def _xmllint(xml: Path) -> subprocess.CompletedProcess[str]:
    xmllint = shutil.which("xmllint")
    if xmllint is None:
        pytest.fail("xmllint is not installed (.ci/run installs libxml2-utils)")
    return subprocess.run(
        [xmllint, "--noout", "--schema", str(JUNIT_XSD), str(xml)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.system
@needs_ffmpeg
def test_junit_validates_against_jenkins_xunit_constraints(media: Path, tmp_path: Path) -> None:
    """Failures, an error (could not run), warnings in system-out: all valid for a strict
    XSD consumer; the xunit1 flavour adds `file` on <testcase>, which it refuses."""
    (media / "dist" / "broken.mp4").write_bytes(b"not a video at all")
    try:
        gate = _gate(media, "dist/**/*.mp4", name="gate-xsd.toml")
        strict = tmp_path / "junit.xml"
        xunit1 = tmp_path / "junit-xunit1.xml"
        argv = ["gate", str(gate), "--local"]
        assert main([*argv, "--format", "junit", "--output", str(strict)]) == 2
        assert main([*argv, "--format", "junit-xunit1", "--output", str(xunit1)]) == 2
    finally:
        (media / "dist" / "broken.mp4").unlink()
    checked = _xmllint(strict)
    assert checked.returncode == 0, checked.stderr
    assert "validates" in checked.stderr
    root = ET.parse(strict).getroot()
    assert "skipped" not in root.attrib
    assert all("file" not in case.attrib for case in root.iter("testcase"))
    xml = JUnitXml.fromfile(str(strict))
    assert (xml.tests, xml.failures, xml.errors) == (4, 1, 1)

    refused = _xmllint(xunit1)
    assert refused.returncode != 0
    assert "'file' is not allowed" in refused.stderr
    files = {c.name: c._elem.get("file") for s in JUnitXml.fromfile(str(xunit1)) for c in s}
    assert files["dist/bad/bad.mp4"] == "dist/bad/bad.mp4"


def test_no_matching_artifact_could_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = _gate(tmp_path, "dist/**/*.mp4")
    assert main(["gate", str(gate), "--local"]) == 2
    assert "no file matches dist/**/*.mp4" in capsys.readouterr().out
    allowed = tmp_path / "allowed.toml"
    allowed.write_text(gate.read_text(encoding="utf-8") + "allow_empty = true\n", encoding="utf-8")
    assert main(["gate", str(allowed), "--local"]) == 0


@pytest.mark.system
@needs_ffmpeg
def test_github_annotations(
    media: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    gate = _gate(media, "dist/**/*.mp4", name="gate-gh.toml")
    assert main(["gate", str(gate), "--local", "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert len(errors) == 1 and len(warnings) == 1
    assert errors[0].startswith("::error file=dist/bad/bad.mp4,title=av.validate/duration::")
    assert warnings[0].startswith("::warning file=dist/warn.mp4,title=av.validate/duration::")
    assert any(line.startswith("gate failed") for line in lines)


def test_github_escaping() -> None:
    line = _gh_command("warning", "50% done\nnext: a,b", file="a,b:c.mp4", title="x%y")
    assert line == "::warning file=a%2Cb%3Ac.mp4,title=x%25y::50%25 done%0Anext: a,b"


@pytest.mark.system
@needs_ffmpeg
def test_placeholder_input_and_pyproject_table(
    media: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = media / "pyproj"
    project.mkdir(exist_ok=True)
    (project / "pyproject.toml").write_text(
        f"""\
[project]
name = "demo"

[tool.packctl.gate.defaults]
fail_on = "warn"

[[tool.packctl.gate.steps]]
pack = "av.validate"
artifacts = ["../dist/good.mp4", "../dist/warn.mp4"]
exclude = ["../dist/good.mp4"]

[tool.packctl.gate.steps.input]
path = "{{artifact}}"
{EXPECT}
""",
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    assert main(["gate", "--local"]) == 1  # warn.mp4 fails under fail_on = "warn"
    out = capsys.readouterr().out
    assert "good.mp4" not in out
    assert "warn.mp4" in out


BAD_FILES = [
    ('[[steps]]\npack = "av.validate"\nfail_on = "sometimes"\n', ":3: steps[0].fail_on:"),
    ('[[steps]]\npack = "av.validate"\nartifactz = "x"\n', ":3: steps[0].artifactz: unknown key"),
    ('[[steps]]\npack = "Not A Pack"\n', ":2: steps[0].pack:"),
    ("version = 1\n", "(top level): 'steps' is a required property"),
    (
        '[[steps]]\npack = "av.validate"\nartifacts = "*.mp4"\n',
        ":3: steps[0].artifacts: artifacts given but the input never receives them",
    ),
    (
        '[[steps]]\npack = "av.validate"\n\n[steps.input]\npath = "{artifact}"\n',
        ':4: steps[0].input: input uses "{artifact}" but the step has no artifacts',
    ),
    ("[[steps]\n", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "expected"), BAD_FILES)
def test_bad_gate_file_messages(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "packctl-gate.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GateFileError) as info:
        load_gate(path)
    message = str(info.value)
    assert expected in message
    assert "\n" not in message


def _run_packctl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("CAPABILITY_PACKS_PLUGINS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-m", "control_plane._features.cli.cli", "gate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.system
def test_bad_gate_file_and_unreachable_server_exit_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "packctl-gate.toml").write_text(
        '[[steps]]\npack = "av.validate"\nstrict = "yes"\n', encoding="utf-8"
    )
    bad = _run_packctl("--local", cwd=tmp_path)
    assert bad.returncode == 2, bad.stderr
    assert bad.stdout == ""
    [line] = bad.stderr.splitlines()
    assert line.startswith("packctl gate: bad gate file: ")
    assert "packctl-gate.toml:3: steps[0].strict: 'yes' is not of type 'boolean'" in line

    _gate(tmp_path, "*.mp4", name="packctl-gate.toml")
    port = _closed_port()
    down = _run_packctl("--target", f"127.0.0.1:{port}", cwd=tmp_path)
    assert down.returncode == 2, down.stderr
    [line] = down.stderr.splitlines()
    assert f"cannot reach the control plane at 127.0.0.1:{port}" in line


def test_expand_and_progress(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/one.wav", "a/b/two.wav", "a/b/skip.wav"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "a" / "dir.wav").mkdir()  # directories are not artifacts
    gate = tmp_path / "g.toml"
    gate.write_text(
        '[[steps]]\npack = "av.validate"\nartifacts = ["a/**/*.wav", "a/one.wav"]\n'
        'exclude = ["**/skip.wav"]\n'
        'input = { path = "{artifact}", note = ["at {artifact}"] }\n'
        '[[steps]]\npack = "av.validate"\ninput = { path = "/nope" }\n',
        encoding="utf-8",
    )
    invocations, problems = expand(load_gate(gate))
    assert problems == []
    assert [i.label for i in invocations] == ["a/b/two.wav", "a/one.wav", "av.validate #2"]
    first: Any = invocations[0].payload
    assert first["path"] == str(tmp_path / "a" / "b" / "two.wav")
    assert first["note"] == [f"at {tmp_path / 'a' / 'b' / 'two.wav'}"]

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    progress = Progress(1, stream)
    progress.update(JobResult.could_not_run(invocations[0], "x", "boom"))
    progress.close()
    assert "[1/1] ERROR av.validate #1 a/b/two.wav" in stream.getvalue()


@pytest.mark.system
@needs_ffmpeg
def test_advisory_step_reports_but_never_fails(
    media: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = _gate(media, "dist/bad/*.mp4", name="gate-advisory.toml")
    gate.write_text(gate.read_text(encoding="utf-8") + "strict = false\n", encoding="utf-8")
    out = tmp_path / "gate.sarif"
    assert main(["gate", str(gate), "--local", "--format", "sarif", "--output", str(out)]) == 0
    assert "ADVISORY" in capsys.readouterr().out
    [result] = json.loads(out.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert result["level"] == "error"  # severity kept
    assert result["properties"]["failsGate"] is False


def test_unknown_pack_exits_2_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = tmp_path / "packctl-gate.toml"
    gate.write_text('[[steps]]\npack = "no.such_pack"\n', encoding="utf-8")
    assert main(["gate", str(gate), "--local"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert "no.such_pack" in line
