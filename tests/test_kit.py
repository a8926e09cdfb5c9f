"""The pack author kit: scaffold into a fresh venv, conformance plugin, broken packs, CLI."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import site
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from child_processes import stop, tied
from tiers import starts_processes

import control_plane
from control_plane import CodeDoc, Context, Pack, PackError, hookimpl
from control_plane._features.cli.cli import main
from control_plane._features.grpc.client import Client, PackCallError
from control_plane.testing import (
    ConformanceError,
    Fault,
    PackKit,
    PackTarget,
    ServedPack,
    assert_rich_status,
    check_target,
)

BROKEN = Path(__file__).resolve().parent / "data" / "broken_packs"
PACK = "acme.word_count"


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CAPABILITY_PACKS_PLUGINS")
    }
    env.update(PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def _run(
    cmd: list[str], cwd: Path, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=timeout, check=False
    )


def _nested_venv(venv: Path, cwd: Path) -> Path:
    """A fresh venv that sees exactly what this test process sees, whatever that is.

    ``venv --system-site-packages`` would expose the *base* interpreter, which inside a
    virtual environment (CI's, a developer's) is not where capability-packs and hatchling
    are. Instead the new venv's ``.pth`` adds this interpreter's own site directories
    (``site.addsitedir``, so their ``.pth`` files, editable installs included, apply too)
    after its own: packages installed into the new venv come first. The same holds for a
    system-wide install, where those directories are the system's.
    """
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd
    )
    assert purelib.returncode == 0, purelib.stderr
    # In this interpreter's own order: a user site (pip install --user) precedes the
    # system one, and may hold newer versions of what the system has.
    site_dirs = {os.path.realpath(d) for d in [*site.getsitepackages(), site.getusersitepackages()]}
    dirs = [d for d in dict.fromkeys(sys.path) if d and os.path.realpath(d) in site_dirs]
    # The project itself first, as imported here (a checkout on PYTHONPATH counts too).
    project_root = str(Path(control_plane.__file__).resolve().parent.parent)
    lines = [f"import site; site.addsitedir({d!r})" for d in dirs if Path(d).is_dir()]
    (Path(purelib.stdout.strip()) / "zz_outer_environment.pth").write_text(
        "\n".join([project_root, *lines]) + "\n"
    )
    return python


@pytest.fixture(scope="module")
@starts_processes
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """``packctl new`` into a temp dir, a fresh venv next to capability-packs, installed."""
    root = tmp_path_factory.mktemp("kit")
    project = root / "acme-word-count"
    assert main(["new", PACK, "--dir", str(project)]) == 0
    python = _nested_venv(root / "venv", root)
    seen = _run(
        [str(python), "-c", "import control_plane, hatchling; print(control_plane.__file__)"], root
    )
    assert seen.returncode == 0, seen.stderr
    assert Path(seen.stdout.strip()).resolve() == Path(control_plane.__file__).resolve()
    # With its dependencies but no package index at all: capability-packs (at the version
    # the scaffold asks for) and the kit extra resolve from what this environment has.
    install = _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-e",
            f"{project}[test]",
        ],
        root,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    yield python, project


@pytest.mark.system
def test_new_writes_a_complete_distribution(scaffolded: tuple[Path, Path]) -> None:
    _, project = scaffolded
    pyproject = (project / "pyproject.toml").read_text()
    assert (
        '[project.entry-points.capability_packs]\nacme_word_count = "acme_word_count"' in pyproject
    )
    assert 'build-backend = "hatchling.build"' in pyproject
    module = (project / "src" / "acme_word_count" / "__init__.py").read_text()
    assert "@hookimpl\ndef register_packs" in module
    output = json.loads((project / "src/acme_word_count/schemas/output.schema.json").read_text())
    assert output["$schema"].startswith("https://json-schema.org/")
    assert "error" not in output["properties"]  # derived from CODES, the one declaration
    assert '"too_large": CodeDoc(' in module and '"not_found": None,' in module
    assert (project / "README.md").is_file() and (project / "tests" / "test_pack.py").is_file()


def test_the_scaffold_asks_for_the_installed_capability_packs(
    scaffolded: tuple[Path, Path],
) -> None:
    from importlib import metadata

    from packaging.requirements import Requirement

    from control_plane._features.kit.scaffold import requirement

    _, project = scaffolded
    installed = metadata.version("capability-packs")
    line = re.search(
        r"^dependencies = \[\"([^\"]+)\"\]", (project / "pyproject.toml").read_text(), re.M
    )
    assert line, "no dependency line"
    req = Requirement(line.group(1))
    assert req.name == "capability-packs"
    assert req.specifier.contains(installed)
    assert str(req.specifier) == f"<0.{int(installed.split('.')[1]) + 1},>={installed}" or (
        not installed.startswith("0.")
    )
    assert requirement("1.4.2") == "capability-packs>=1.4.2,<2"
    assert requirement("0.3.0.dev1+g1234") == "capability-packs>=0.3.0.dev1,<0.4"
    assert requirement("0+unknown") == "capability-packs"


def test_new_refuses_bad_names_and_non_empty_dirs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new", "NoDots", "--dir", str(tmp_path / "x")]) == 2
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    assert main(["new", "acme.other", "--dir", str(tmp_path / "taken")]) == 2
    assert "not an empty directory" in capsys.readouterr().err


@pytest.mark.system
def test_generated_tests_pass_in_a_fresh_venv(scaffolded: tuple[Path, Path]) -> None:
    python, project = scaffolded
    done = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert re.search(r"\b9 passed\b", out), out
    # The plugin came from capability-packs' pytest11 entry point and printed its fault map.
    assert "capability-packs kit: fault map" in out
    assert re.search(r"http_429\s+seam x1\s+rate_limited\s+rate_limited", out), out


@pytest.mark.system
def test_packctl_list_in_the_venv_shows_the_pack(scaffolded: tuple[Path, Path]) -> None:
    python, project = scaffolded
    done = _run(
        [
            str(python),
            "-m",
            "control_plane._features.cli.cli",
            "list",
            "--local",
            "--output",
            "json",
        ],
        project,
    )
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    names = [p["name"] for p in listing["packs"]]
    assert PACK in names, names


@pytest.mark.system
def test_scaffolded_pack_served_and_called_over_grpc(scaffolded: tuple[Path, Path]) -> None:
    python, project = scaffolded
    proc = subprocess.Popen(
        tied(
            [
                str(python),
                "-m",
                "control_plane._features.cli.cli",
                "serve",
                "--address",
                "127.0.0.1:0",
                "--log-level",
                "warning",
                "--grace",
                "0.5",
            ]
        ),
        cwd=project,
        env=_env(CAPABILITY_PACKS_PLUGINS="acme_word_count"),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        target = None
        deadline = time.monotonic() + 30
        while target is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            match = re.search(r"serving \d+ pack\(s\) on (127\.0\.0\.1:\d+)", line)
            target = match.group(1) if match else None
        assert target, "packctl serve did not report its address"
        with Client(target, timeout=15) as client:
            outcome = client.invoke(PACK, {"text": "hello brave new world"})
            assert outcome.result == {"words": 4, "lines": 1, "characters": 21}
            with pytest.raises(PackCallError) as caught:
                client.invoke(PACK, {"text": "a b c", "max_words": 2})
            assert caught.value.code == "too_large"
            with pytest.raises(PackCallError) as missing:
                client.invoke(PACK, {"source": str(project / "no-such-file.txt")})
            assert missing.value.code == "not_found"
            (project / "notes.txt").write_text("one two three")
            inside = client.invoke(PACK, {"source": "notes.txt"})
            assert inside.result == {"words": 3, "lines": 1, "characters": 13}
            # Issue 42: served with the defaults, the scaffold reads only under its grant
            # ($CWD, the project here): a server file outside it is refused, not read.
            outside = project.parent / "outside-the-grant.txt"
            outside.write_text("a server file")
            for path in ("/etc/passwd", str(outside), "../outside-the-grant.txt"):
                with pytest.raises(PackCallError) as refused:
                    client.invoke(PACK, {"source": path})
                assert refused.value.code == "not_permitted", path
                assert "server file" not in str(refused.value.outcome.to_dict())
    finally:
        stop(proc, 15)


def test_packctl_check_on_the_scaffold(
    scaffolded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, project = scaffolded
    assert main(["check", str(project)]) == 0
    out = capsys.readouterr().out
    assert "acme.word_count 0.1.0" in out
    assert "network_error->source_unreachable" in out
    assert "conformance ok" in out


# -- broken packs --------------------------------------------------------------------


@pytest.mark.system
def test_broken_packs_fail_the_kit_naming_the_fault(tmp_path: Path) -> None:
    work = tmp_path / "broken"
    shutil.copytree(BROKEN, work, ignore=shutil.ignore_patterns("__pycache__"))
    report = tmp_path / "report.xml"
    done = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "conformance_suite.py",
            "-k",
            "not generated",
            f"--junitxml={report}",
        ],
        work,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    results: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        results[case.attrib["name"]] = (
            "" if failure is None else (failure.attrib.get("message", "") + (failure.text or ""))
        )
    expected_faults = {
        "test_static[open_vocabulary_pack]": "open vocabulary: error code has no enum",
        "test_faults[leaky_pack]": "secret leaked to the caller",
        "test_faults[undeclared_code_pack]": "raised undeclared code 'downstream_down'",
        "test_invoke[bad_output_pack]": "output breaks its output schema: /count",
    }
    for test, fault in expected_faults.items():
        assert fault in results[test], (test, results[test][:2000])
    assert "pack 'broken.leaky'" in results["test_faults[leaky_pack]"]
    assert "secret_in_exception" in results["test_faults[leaky_pack]"]  # the fault named
    for test in (
        "test_static[leaky_pack]",
        "test_static[undeclared_code_pack]",
        "test_static[bad_output_pack]",
    ):
        assert results[test] == "", (test, results[test][:2000])


def _broken(name: str) -> Any:
    sys.path.insert(0, str(BROKEN))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(BROKEN))


def test_generated_inputs_catch_output_that_breaks_its_schema() -> None:
    module = _broken("bad_output_pack")
    target = PackTarget(module.PACK_NAME, plugin=module)
    with (
        PackKit(target) as kit,
        pytest.raises(ConformanceError, match=r"breaks its output schema: /count"),
    ):
        kit.check_generated_inputs(max_examples=5)


def test_packctl_check_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BROKEN / "open_vocabulary_pack.py")]) == 1
    out = capsys.readouterr().out
    assert "plugin 'open_vocabulary_pack', pack 'broken.open_vocab'" in out
    assert "open vocabulary" in out
    assert main(["check", str(BROKEN / "leaky_pack.py"), "--output", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["packs"][0]["nearest"]["timeout"] == "network_error"
    assert main(["check", str(BROKEN / "no-such-dir")]) == 2
    assert main(["check", "no.such_pack"]) == 2
    assert "no pack named 'no.such_pack'" in capsys.readouterr().err


# -- the harness on packs defined here ---------------------------------------------


def _output(codes: list[str], **props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            **props,
            "error": {"type": "object", "properties": {"code": {"enum": codes}}},
        },
    }


def _quota(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    if doc.get("fail"):
        raise PackError("rate_limited", "slow down", retry_after=3)
    return {"n": 1}


async def _async_downstream(key: str) -> str:
    """An async seam (the kit replaces it; never reached for real)."""
    raise AssertionError("the kit should have patched this seam")


async def _async_handler(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"n": len(await _async_downstream(doc.get("key", "k")))}


class _Plugin:
    """Packs defined here: no seams (boundary mode), rate-limiting, async with a seam."""

    @hookimpl
    def register_packs(self, register: Any) -> None:
        register(
            Pack(
                name="kit.boundary",
                version="1.0.0",
                summary="No seams: the kit injects at the handler call.",
                input_schema={"type": "object"},
                output_schema=_output(["not_found", "download_failed"], n={"type": "integer"}),
                handler=_quota,
                codes={
                    "download_failed": CodeDoc(
                        "The download failed.",
                        retryable=True,
                        recovery_hint="Retry later.",
                        absorbs=("network_error",),
                    )
                },
            )
        )
        register(
            Pack(
                name="kit.quota",
                version="1.0.0",
                summary="Rate-limits on request.",
                input_schema={"type": "object", "properties": {"fail": {"type": "boolean"}}},
                output_schema=_output(["rate_limited"], n={"type": "integer"}),
                handler=_quota,
            )
        )
        register(
            Pack(
                name="kit.async",
                version="1.0.0",
                summary="Async, with an async seam.",
                input_schema={"type": "object", "properties": {"key": {"type": "string"}}},
                output_schema=_output(["timeout", "not_found"], n={"type": "integer"}),
                handler=_async_handler,
            )
        )


async def _fake(key: str) -> str:
    return "abc"


def test_seam_mode_on_an_async_pack_with_an_async_seam() -> None:
    before = _async_downstream
    target = PackTarget(
        "kit.async", plugin=_Plugin(), seams={f"{__name__}:_async_downstream": _fake}
    )
    with PackKit(target) as kit:
        assert kit.invoke({"key": "x"}).result == {"n": 3}
        report = kit.inject_faults(["timeout", "deadline", "http_404", "secret_in_exception"])
        assert [r.where for r in report.results] == ["seam x1"] * 4
        assert report.mapped("deadline") == "timeout"
        assert report.mapped("http_404") == "not_found"
        assert report.mapped("secret_in_exception") == "internal_error"
        generated = kit.check_generated_inputs(max_examples=10)
        assert generated.examples == 10
    assert _async_downstream is before  # the seam is restored


def test_custom_faults_join_the_catalogue() -> None:
    """A fault of the pack's own downstream library: injected, mapped, expected, served."""
    missing = Fault(
        "cache_file_missing",
        "the cache file vanished (FileNotFoundError)",
        "raise",
        lambda secrets: FileNotFoundError(2, "No such file or directory", "/var/cache/k"),
    )
    target = PackTarget(
        "kit.async",
        plugin=_Plugin(),
        seams={f"{__name__}:_async_downstream": _fake},
        expect={"cache_file_missing": "not_found", "http_404": "not_found"},
    )
    with PackKit(target) as kit:
        report = kit.inject_faults([missing, "http_404"])
        assert report.mapped("cache_file_missing") == "not_found"
        assert "cache_file_missing" in report.render()
    wrong = dataclasses.replace(target, expect={"cache_file_missing": "timeout"})
    with (
        PackKit(wrong) as kit,
        pytest.raises(ConformanceError, match="expected 'timeout', the caller got 'not_found'"),
    ):
        kit.inject_faults([missing])
    with ServedPack(target) as served, served.faulted(missing):
        assert_rich_status(served.status({"key": "x"}), "not_found", pack="kit.async")


def test_boundary_mode_maps_every_fault_onto_the_vocabulary() -> None:
    target = PackTarget("kit.boundary", plugin=_Plugin(), expect={"http_404": "not_found"})
    with PackKit(target) as kit:
        report = kit.inject_faults()
    assert report.mode.startswith("boundary mode")
    assert report.mapped("connection_reset") == "download_failed"  # absorbed
    assert (
        report.mapped("http_429") == "download_failed"
    )  # rate_limited -> network_error -> absorbed
    assert report.mapped("deadline") == "download_failed"  # timeout -> network_error -> absorbed
    assert report.mapped("http_401") == "internal_error"  # nothing declared or absorbs it
    assert report.mapped("output_not_object") == "internal_error"
    for result in report.results:
        assert result.code in kit.loaded.vocabulary
        assert result.code == result.propagated or result.propagated is None
    assert "download_failed" in report.render()


def test_expectations_are_checked() -> None:
    target = PackTarget("kit.boundary", plugin=_Plugin(), expect={"http_404": "download_failed"})
    with (
        PackKit(target) as kit,
        pytest.raises(ConformanceError, match="expected 'download_failed'"),
    ):
        kit.inject_faults(["http_404"])


def test_rich_status_helpers_over_grpc() -> None:
    with ServedPack(PackTarget("kit.quota", plugin=_Plugin())) as served:
        assert served.invoke({}).result == {"n": 1}
        status = served.status({"fail": True})
        assert_rich_status(status, "rate_limited", pack="kit.quota", retry_after=3)
        with pytest.raises(AssertionError, match=r"ErrorInfo\.reason 'RATE_LIMITED'"):
            assert_rich_status(status, "not_found")
        with pytest.raises(AssertionError, match="it succeeded"):
            served.status({})


def test_the_plugin_is_registered_here_too(request: pytest.FixtureRequest) -> None:
    """The pytest11 entry point loads the plugin in this suite as well; its fixtures are
    there, and a session that uses none of them is left alone."""
    plugin = request.config.pluginmanager.get_plugin("capability_packs")
    assert plugin is not None
    assert {"capability_pack", "pack_kit", "pack_grpc"} <= set(vars(plugin))


def test_a_seam_that_does_not_resolve_is_named() -> None:
    target = PackTarget("kit.async", plugin=_Plugin(), seams=[f"{__name__}:no_such_function"])
    with pytest.raises(ConformanceError, match="no_such_function"):
        PackKit(target)


class _LintPlugin:
    @hookimpl
    def register_packs(self, register: Any) -> None:
        register(
            Pack(
                name="kit.lint",
                version="1.0.0",
                summary="Passes the registry, not the kit's lints.",
                input_schema={
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "examples": [{"n": "three"}],
                },
                output_schema=_output(["network_error", "fetch_failed"]),
                handler=_quota,
                codes={
                    "fetch_failed": CodeDoc(
                        "Failed.", recovery_hint="Retry.", absorbs=("network_error",)
                    )
                },
            )
        )


def test_static_lints_name_their_fault() -> None:
    report = check_target(PackTarget("kit.lint", plugin=_LintPlugin()))
    text = report.render()
    assert not report.ok
    assert "input schema example #0 does not validate: 'three' is not of type 'integer'" in text
    assert "WARNING plugin '_LintPlugin', pack 'kit.lint': code 'fetch_failed' absorbs" in text
    assert report.pack("kit.lint").vocabulary == [
        "network_error",
        "fetch_failed",
        "internal_error",
        "not_permitted",
    ]
    with (
        PackKit(PackTarget("kit.lint", plugin=_LintPlugin())) as kit,
        pytest.raises(ConformanceError, match="failed static conformance"),
    ):
        kit.check_static()


# -- the cancellation check -----------------------------------------------------------------


def _downstream(key: str) -> str:
    return key


def _retries_blindly(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Retries a failing downstream 200 times, never looking at the context."""
    for _ in range(200):
        try:
            return {"n": len(_downstream("k"))}
        except ConnectionError:
            continue
    raise PackError("network_error", "gave up")


def _retries_until_cancelled(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    while not ctx.cancelled:
        try:
            return {"n": len(_downstream("k"))}
        except ConnectionError:
            continue
    raise PackError("network_error", "cancelled")


class _RetryPlugin:
    @hookimpl
    def register_packs(self, register: Any) -> None:
        for name, handler in (
            ("kit.blind", _retries_blindly),
            ("kit.aware", _retries_until_cancelled),
        ):
            register(
                Pack(
                    name=name,
                    version="1.0.0",
                    summary="Retries its downstream.",
                    input_schema={"type": "object"},
                    output_schema=_output(["network_error"], n={"type": "integer"}),
                    handler=handler,
                )
            )


def test_the_kit_checks_that_a_sync_handler_stops_when_cancelled() -> None:
    """A handler retrying a slow, failing downstream without looking at ``ctx.cancelled``
    keeps its thread ~10 s past its call: the kit says so. One that polls it is free
    within the grace."""
    seams = {f"{__name__}:_downstream": None}
    with (
        PackKit(PackTarget("kit.blind", plugin=_RetryPlugin(), seams=seams)) as kit,
        pytest.raises(ConformanceError, match=r"ignores ctx\.cancelled"),
    ):
        kit.check_cancellation(grace=1.0)
    with PackKit(PackTarget("kit.aware", plugin=_RetryPlugin(), seams=seams)) as kit:
        assert kit.check_cancellation(grace=1.0) < 1.0


# -- the kit runs a pack under a grant (issue 42) -------------------------------------


def _read_file(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    fd = ctx.reach.open_read(doc["path"], "path")
    try:
        return {"text": os.read(fd, 1000).decode()}
    finally:
        os.close(fd)


class _ReaderPlugin:
    @hookimpl
    def register_packs(self, register: Any) -> None:
        register(
            Pack(
                name="kit.reader",
                version="1.0.0",
                summary="Reads a file through ctx.reach.",
                input_schema={"type": "object", "required": ["path"]},
                output_schema={"type": "object", "properties": {"text": {"type": "string"}}},
                handler=_read_file,
                codes={"not_found": None},
                reach=control_plane.Reach(reads=("$CWD",)),
            )
        )


def test_the_kit_runs_a_pack_under_its_declaration_over_roots_it_made(tmp_path: Path) -> None:
    """A pack that declares the least reach ($CWD) passes its kit tests: the kit grants the
    declaration with $CWD a directory of its own, where the test puts the file."""
    (tmp_path / "elsewhere.txt").write_text("not granted")
    with PackKit(PackTarget("kit.reader", plugin=_ReaderPlugin())) as kit:
        root = kit.root("$CWD")
        assert root.is_dir() and root.resolve() != Path.cwd().resolve()
        (root / "notes.txt").write_text("granted")
        assert kit.invoke({"path": "notes.txt"}).result == {"text": "granted"}
        assert kit.invoke({"path": str(root / "notes.txt")}).result == {"text": "granted"}
        assert kit.invoke({"path": str(tmp_path / "elsewhere.txt")}).code == "not_permitted"
        assert kit.invoke({"path": "tests/test_kit.py"}).code == "not_found"  # not the real $CWD
    assert not root.exists()  # the kit's directories go with it


def test_the_kit_runs_a_pack_under_a_grant_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("stated")
    target = PackTarget("kit.reader", plugin=_ReaderPlugin(), grant={"fs.read": [str(tmp_path)]})
    with PackKit(target) as kit:
        assert kit.invoke({"path": str(tmp_path / "data.txt")}).result == {"text": "stated"}
        (kit.root("$CWD") / "notes.txt").write_text("not granted now")
        assert kit.invoke({"path": str(kit.root("$CWD") / "notes.txt")}).code == "not_permitted"
    with ServedPack(target) as served:
        assert served.invoke({"path": str(tmp_path / "data.txt")}).result == {"text": "stated"}
        with pytest.raises(PackCallError) as refused:
            served.invoke({"path": "/etc/passwd"})
        assert refused.value.code == "not_permitted"
