"""``packctl``: list/describe/call against a real server and ``--local``; exit codes; serve."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import testpacks
from child_processes import tied
from server_support import PACKCTL, ROOT, ServerThread, subprocess_env

from control_plane._features.cli.cli import EXIT_OK, EXIT_PACK_ERROR, EXIT_USAGE, build_parser, main
from control_plane._features.grpc.client import Client

LOCAL = ["--local", "--plugin", "testpacks"]


@pytest.fixture(autouse=True)
def _only_test_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """--local loads the built-ins too; restrict it to the test plugin."""
    monkeypatch.setenv("CAPABILITY_PACKS_PLUGINS", "testpacks")


# --local with --plugin describes the plugin module in a confined worker (a process) first.
@pytest.fixture(params=["remote", pytest.param("local", marks=pytest.mark.system)])
def where(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "local":
        return LOCAL
    srv = request.getfixturevalue("server")
    return ["--target", srv.target]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_call_success_human_and_json(capsys: Any, where: list[str]) -> None:
    code, out, _ = run(capsys, "call", "test.echo", "--input", '{"a": 1}', *where)
    assert code == EXIT_OK
    assert "test.echo 1.0.0: ok" in out
    assert '"a": 1' in out
    code, out, _ = run(
        capsys, "call", "test.echo", "--input", '{"a": 1}', "--output", "json", *where
    )
    assert code == EXIT_OK
    data = json.loads(out)
    assert data["result"]["echo"] == {"a": 1}
    assert data["pack"] == "test.echo" and data["version"] == "1.0.0"
    assert "error" not in data


def test_call_pack_error_exits_1_with_the_envelope(capsys: Any, where: list[str]) -> None:
    code, out, err = run(capsys, "call", "test.fail", "--input", '{"code": "rate_limited"}', *where)
    assert code == EXIT_PACK_ERROR
    assert "error: rate_limited (retryable)" in err
    assert "retry after: 2.5s" in err
    assert out == ""
    code, out, _ = run(
        capsys,
        "call",
        "test.fail",
        "--input",
        '{"code": "internal_error"}',
        "--output",
        "json",
        *where,
    )
    assert code == EXIT_PACK_ERROR
    error = json.loads(out)["error"]
    assert error["code"] == "internal_error"
    assert error["reference_id"].startswith("ref_")
    assert error["retryable"] is False
    assert testpacks.SECRET not in out


def test_pack_specific_code_exits_1(capsys: Any, where: list[str]) -> None:
    code, out, _ = run(
        capsys,
        "call",
        "test.fail",
        "--input",
        '{"code": "dependency_missing"}',
        "--output",
        "json",
        *where,
    )
    assert code == EXIT_PACK_ERROR
    assert json.loads(out)["error"]["code"] == "dependency_missing"


CHECKS = {
    "checks": [
        {"id": "loud", "severity": "warn", "message": "too loud", "expected": -14, "actual": -9},
        {"id": "codec", "severity": "fail", "message": "wrong codec", "location": "/streams/1"},
        {"id": "size", "severity": "pass", "message": "fine"},
    ]
}


def test_findings_are_readable(capsys: Any, where: list[str]) -> None:
    code, out, _ = run(capsys, "call", "test.findings", "--input", json.dumps(CHECKS), *where)
    assert code == EXIT_OK
    assert "validation: FAIL (1 pass, 1 warn, 1 fail)" in out
    assert "WARN  loud: too loud (expected -14, actual -9)" in out
    assert "FAIL  codec: wrong codec (at /streams/1)" in out


def test_strict_and_fail_on(capsys: Any, where: list[str]) -> None:
    doc = json.dumps(CHECKS)
    code, _, err = run(capsys, "call", "test.findings", "--input", doc, "--strict", *where)
    assert code == EXIT_PACK_ERROR
    assert "error: artifact_failed" in err
    assert "failing checks:" in err and "FAIL  codec" in err
    warn_only = json.dumps({"checks": CHECKS["checks"][:1]})
    assert run(capsys, "call", "test.findings", "--input", warn_only, "--strict", *where)[0] == 0
    code, out, _ = run(
        capsys,
        "call",
        "test.findings",
        "--input",
        warn_only,
        "--strict",
        "--fail-on",
        "warn",
        "--output",
        "json",
        *where,
    )
    assert code == EXIT_PACK_ERROR
    data = json.loads(out)
    assert [c["id"] for c in data["error"]["checks"]] == ["loud"]
    assert data["validation"]["status"] == "warn"


def test_unknown_pack_and_invalid_input_are_usage_errors(capsys: Any, where: list[str]) -> None:
    code, _, err = run(capsys, "call", "no.such", *where)
    assert code == EXIT_USAGE
    assert "unknown pack 'no.such'" in err
    code, out, _ = run(
        capsys, "call", "test.strict_input", "--input", '{"name": 3}', "--output", "json", *where
    )
    assert code == EXIT_USAGE
    problem = json.loads(out)["problem"]
    assert problem["kind"] == "invalid_input"
    assert {v["field"] for v in problem["violations"]} == {"", "/name"}
    # In text, every violation is listed, not only the first with "(and 1 more)".
    code, _, err = run(capsys, "call", "test.strict_input", "--input", '{"name": 3}', *where)
    assert code == EXIT_USAGE
    listed = [line.strip() for line in err.splitlines() if line.startswith("  ")]
    assert len(listed) == 2 and any(line.startswith("/name:") for line in listed)
    code, _, err = run(capsys, "call", "test.echo", "--input", "{oops", *where)
    assert code == EXIT_USAGE
    assert "not valid JSON" in err
    assert run(capsys, "describe", "no.such", *where)[0] == EXIT_USAGE


def test_deadline(capsys: Any, where: list[str]) -> None:
    code, out, _ = run(
        capsys,
        "call",
        "test.hang",
        "--input",
        '{"seconds": 20}',
        "--deadline",
        "0.5",
        "--output",
        "json",
        *where,
    )
    assert code == EXIT_PACK_ERROR
    assert json.loads(out)["error"]["code"] == "timeout"


def test_a_deadline_the_server_did_not_answer_is_no_pack_code(capsys: Any) -> None:
    """A server that never answers: the caller's deadline fires with no details. That is
    not the pack's ``timeout`` (which it may not declare), but a call with no answer."""
    import grpc

    release = threading.Event()

    def never(request: bytes, context: grpc.ServicerContext) -> bytes:
        release.wait(10)
        return b""

    server = grpc.server(__import__("concurrent.futures").futures.ThreadPoolExecutor(4))
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "control_plane.v1.ControlPlaneService",
                {"InvokePack": grpc.unary_unary_rpc_method_handler(never)},
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        code, out, _ = run(
            capsys,
            "call",
            "x.y",
            "--target",
            f"127.0.0.1:{port}",
            "--deadline",
            "0.3",
            "--output",
            "json",
        )
    finally:
        release.set()
        server.stop(None)
    assert code == EXIT_USAGE
    data = json.loads(out)
    assert "error" not in data
    assert data["problem"]["kind"] == "connection"
    assert "no answer" in data["problem"]["message"]


def test_list_and_describe(capsys: Any, where: list[str]) -> None:
    code, out, _ = run(capsys, "list", *where)
    # the server's test packs include a broken plugin: listed, and the exit says so
    assert code == (EXIT_OK if where == LOCAL else EXIT_PACK_ERROR)
    assert re.search(r"^test\.fail\s+2\.1\.0\s+Fail with the code", out, re.M)
    code, out, _ = run(capsys, "list", "--output", "json", *where)
    data = json.loads(out)
    assert "test.echo" in [p["name"] for p in data["packs"]]
    code, out, _ = run(capsys, "describe", "test.fail", *where)
    assert code == EXIT_OK
    assert "rate_limited  [retryable, baseline, gRPC RESOURCE_EXHAUSTED]" in out
    assert "quota_exceeded  [retryable, pack, gRPC UNAVAILABLE]" in out
    assert "absorbs: not_found" in out
    code, out, _ = run(capsys, "describe", "test.fail", "--output", "json", *where)
    data = json.loads(out)
    # not_permitted, the refusal by grant, is every pack's (docs/grants.md).
    assert [c["code"] for c in data["vocabulary"]] == [*testpacks.FAIL_CODES, "not_permitted"]
    assert data["input_schema"]["required"] == ["code"]


def test_list_reports_load_failures(capsys: Any, server: ServerThread) -> None:
    code, out, _ = run(capsys, "list", "--target", server.target)
    assert code == EXIT_PACK_ERROR
    assert "1 load failure(s):" in out
    assert "broken_plugin" in out and "broken on purpose" in out


@pytest.mark.system  # --plugin: a describing worker
def test_input_from_a_file(capsys: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_text('{"from": "file"}')
    code, out, _ = run(
        capsys, "call", "test.echo", "--input", f"@{path}", "--output", "json", *LOCAL
    )
    assert code == EXIT_OK
    assert json.loads(out)["result"]["echo"] == {"from": "file"}
    code, _, err = run(capsys, "call", "test.echo", "--input", f"@{tmp_path}/missing.json", *LOCAL)
    assert code == EXIT_USAGE
    assert "cannot read input file" in err


@pytest.mark.system
def test_input_from_stdin(server: ServerThread) -> None:
    proc = subprocess.run(
        [
            *PACKCTL,
            "call",
            "test.echo",
            "--input",
            "-",
            "--target",
            server.target,
            "--output",
            "json",
        ],
        input='{"from": "stdin"}',
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    assert json.loads(proc.stdout)["result"]["echo"] == {"from": "stdin"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_connection_problems_exit_2(capsys: Any) -> None:
    target = f"127.0.0.1:{_free_port()}"
    code, _, err = run(capsys, "list", "--target", target)
    assert code == EXIT_USAGE
    assert f"cannot reach the control plane at {target}" in err
    code, out, _ = run(capsys, "call", "test.echo", "--target", target, "--output", "json")
    assert code == EXIT_USAGE
    assert json.loads(out)["problem"]["kind"] == "connection"


def test_usage_errors_exit_2(capsys: Any) -> None:
    for argv in (
        [],
        ["call"],
        ["call", "x", "--fail-on", "never"],
        ["call", "x", "--deadline", "-1"],
        ["list", "--local", "--target", "127.0.0.1:1"],
        ["frobnicate"],
    ):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == EXIT_USAGE, argv
    capsys.readouterr()


def test_defaults() -> None:
    parser = build_parser()
    args = parser.parse_args(["serve"])
    assert args.address == "127.0.0.1:50051"
    args = parser.parse_args(["list"])
    assert args.target == "127.0.0.1:50051" and not args.local
    args = parser.parse_args(["call", "x"])
    assert args.input == "{}" and args.fail_on == "fail" and args.deadline is None


# -- serve -----------------------------------------------------------------------------


def start_serve(
    *extra: str, env: dict[str, str] | None = None, cwd: Path = ROOT, drain: bool = False
) -> tuple[subprocess.Popen[str], str]:
    """`packctl serve` on an ephemeral port; returns the process and its target.

    ``drain``: keep reading stderr after the banner (a thread), for a server that logs
    more than a pipe holds (~64 KB) before :func:`stop_serve`; otherwise it blocks on
    its next log write once the pipe is full."""
    proc = subprocess.Popen(
        tied([*PACKCTL, "serve", "--address", "127.0.0.1:0", *extra]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or subprocess_env(),
        cwd=cwd,
    )
    assert proc.stderr is not None
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        match = re.search(r"serving \d+ pack\(s\) on (127\.0\.0\.1:\d+)", line)
        if match:
            proc.banner = "".join(lines)  # type: ignore[attr-defined]
            if drain:
                rest: list[str] = []
                reader = threading.Thread(target=rest.extend, args=(proc.stderr,), daemon=True)
                reader.start()
                proc.drained = (reader, rest)  # type: ignore[attr-defined]
            return proc, match.group(1)
    proc.kill()
    raise AssertionError("packctl serve did not start:\n" + "".join(lines))


def stop_serve(proc: subprocess.Popen[str]) -> str:
    """SIGTERM, wait; what the server wrote on stderr after its banner."""
    proc.send_signal(signal.SIGTERM)
    drained = getattr(proc, "drained", None)
    if drained is None:
        _, err = proc.communicate(timeout=30)
        return err
    reader, rest = drained
    proc.wait(timeout=30)
    reader.join(timeout=30)
    return "".join(rest)


@pytest.mark.system
@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_starts_when_a_builtin_plugin_fails(tmp_path: Path, workers: str) -> None:
    # Shadow the built-in packs with a package whose first plugin cannot import.
    fake = tmp_path / "packs"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "av_validate.py").write_text("raise ImportError('ffprobe bindings missing')\n")
    env = subprocess_env(CAPABILITY_PACKS_PLUGINS="packs.av_validate,testpacks")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    proc, target = start_serve(
        "--plugin",
        "testpacks",
        "--log-format",
        "kv",
        "--workers",
        workers,
        env=env,
        cwd=tmp_path,
        drain=True,  # what follows the banner line, whole
    )
    try:
        with Client(target) as client:
            listing = client.list_packs(timeout=10)
            assert "test.echo" in listing.names()
            assert [f.plugin for f in listing.failures] == ["packs.av_validate"]
            assert "ffprobe bindings missing" in listing.failures[0].reason
            assert client.invoke("test.echo", {"up": True}, timeout=10).result is not None
    finally:
        err = stop_serve(proc)
    banner = proc.banner  # type: ignore[attr-defined]
    assert "packs.av_validate" in banner and "load failure" in banner
    # after the banner, as packctl list shows them (a supervisor: the workers' failures)
    block = err.split("1 load failure(s):\n", 1)[1]
    assert block.startswith("  plugin 'packs.av_validate': failed to load: ImportError")
    assert proc.returncode == 0
    assert "packctl: stopped" in err


@pytest.mark.system
def test_serve_logs_structured_lines(tmp_path: Path) -> None:
    proc, target = start_serve("--plugin", "testpacks")
    try:
        with Client(target) as client, pytest.raises(Exception):  # noqa: B017
            client.invoke("test.fail", {"code": "internal_error"}, request_id="srv-1")
    finally:
        err = stop_serve(proc)
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    failed = [line for line in lines if line.get("event") == "failed"]
    assert failed and failed[0]["request_id"] == "srv-1"
    assert failed[0]["pack"] == "test.fail" and failed[0]["code"] == "internal_error"
    assert failed[0]["reference_id"].startswith("ref_")
    assert testpacks.SECRET not in err


@pytest.mark.system
def test_serve_port_in_use_exits_2() -> None:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = subprocess.run(
            [*PACKCTL, "serve", "--address", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
            check=False,
        )
    assert proc.returncode == EXIT_USAGE
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr
    # Said plainly, with what to do, and without gRPC's raw log line before it.
    assert "Address already in use" in proc.stderr and "--address HOST:PORT" in proc.stderr
    assert "add_port" not in proc.stderr and "GRPC_VERBOSITY" not in proc.stderr


_PLUGIN_FILE = """
from control_plane import Pack, Reach, hookimpl

def echo(doc, ctx):
    return dict(doc)

@hookimpl
def register_packs(register):
    out = {"type": "object", "properties": {"error": {"type": "object",
           "properties": {"code": {"enum": ["not_found"]}}}}}
    register(Pack(name="file.echo", version="1.0.0", summary="Echo.", handler=echo,
                  input_schema={"type": "object"}, output_schema=out, reach=Reach()))
    register(Pack(name="file.broken", version="1.0.0", summary="Broken.", handler=echo,
                  input_schema={"type": "nonsense"}, output_schema=out, reach=Reach()))
"""


@pytest.mark.system  # --plugin: a describing worker
def test_plugin_as_a_file_and_the_messages_of_plugins_that_do_not_load(
    capsys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPABILITY_PACKS_PLUGINS", "cli_file_plugin_xyz")
    module = tmp_path / "cli_file_plugin_xyz.py"
    module.write_text(_PLUGIN_FILE)
    code, out, _ = run(
        capsys, "call", "file.echo", "--local", "--plugin", str(module), "--input", '{"a": 1}'
    )
    assert code == EXIT_OK and '"a": 1' in out
    # A pack rejected at load time: the call says why, not just "unknown pack".
    code, _, err = run(
        capsys, "call", "file.broken", "--local", "--plugin", str(module), "--input", "{}"
    )
    assert code == EXIT_USAGE
    assert "'file.broken' failed to load" in err and "invalid JSON Schema" in err
    # A module that is not importable: the hint says how to make it so.
    code, out, err = run(capsys, "list", "--local", "--plugin", "no_such_module_xyz")
    assert "PYTHONPATH=." in out + err and "--plugin ./no_such_module_xyz.py" in out + err


def test_a_mistyped_option_gets_the_commands_usage_and_a_suggestion(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["call", "test.echo", "--stict"])
    assert exited.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "usage: packctl call" in err
    assert "unrecognized arguments: --stict (did you mean --strict?)" in err
