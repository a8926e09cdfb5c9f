"""``packctl call``'s exit code survives its output going nowhere, and its input is bounded.

``packctl call ... | head``: the reader may be gone before packctl writes. The exit code
must still say what happened to the call (1 a pack error, 2 a usage or connection
problem), and Python's own flush at exit must not turn it into 120. Each case runs a real
``packctl`` process against a real server with its stdout (or stderr) a pipe whose reading
end is already closed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from child_processes import tied
from server_support import PACKCTL, ServerThread, subprocess_env

from control_plane._features.cli.cli import EXIT_OK, EXIT_PACK_ERROR, EXIT_USAGE, main
from control_plane._features.grpc.client import DEFAULT_MAX_MESSAGE_BYTES

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system


def _packctl_into_closed_pipe(
    argv: list[str], *, stream: str, buffered: bool, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    read, write = os.pipe()
    os.close(read)  # the reader is gone (`| head` that already exited)
    env = subprocess_env()
    if buffered:
        env.pop("PYTHONUNBUFFERED", None)
    try:
        streams: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        streams[stream] = write
        return subprocess.run(
            tied([*PACKCTL, *argv]), env=env, input=stdin, timeout=120, check=False, **streams
        )
    finally:
        os.close(write)


@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize(
    ("argv", "stream", "expected"),
    [
        (
            ["call", "test.fail", "--input", '{"code": "not_found"}', "--output", "json"],
            "stdout",
            1,
        ),
        (["call", "test.fail", "--input", '{"code": "not_found"}'], "stderr", 1),
        (["call", "test.echo", "--input", '{"a": 1}'], "stdout", 0),
        (["call", "no.such.pack", "--output", "json"], "stdout", 2),
        (["call", "no.such.pack"], "stderr", 2),
        (["call", "test.echo", "--input", "{not json", "--output", "json"], "stdout", 2),
    ],
    ids=["pack-error-json", "pack-error-human", "ok", "unknown-json", "unknown-human", "bad-json"],
)
def test_the_exit_code_survives_a_closed_pipe(
    server: ServerThread, argv: list[str], stream: str, expected: int, buffered: bool
) -> None:
    """Before: a failed call piped into a closed reader exited 0 (the BrokenPipeError
    handler returned EXIT_OK whatever the call did), or 120 when the write was buffered
    until Python's flush at exit."""
    done = _packctl_into_closed_pipe(
        [*argv, "--target", server.target], stream=stream, buffered=buffered
    )
    assert done.returncode == expected, (done.stdout, done.stderr)
    assert b"Traceback" not in (done.stderr or b"") + (done.stdout or b"")


def _too_big() -> bytes:
    return b'{"a": "' + b"x" * DEFAULT_MAX_MESSAGE_BYTES + b'"}'


def test_an_input_file_over_the_message_limit_is_refused_before_sending(
    capsys: pytest.CaptureFixture[str], server: ServerThread, tmp_path: Path
) -> None:
    """A 4 MiB+ input file was read whole (``@/dev/zero``: without end) and sent: gRPC's
    own ``RESOURCE_EXHAUSTED`` came back as if the control plane had answered. It is an
    invalid input, named with the limit, exit 2, nothing sent."""
    big = tmp_path / "big.json"
    big.write_bytes(_too_big())
    code = main(["call", "test.echo", "--input", f"@{big}", "--output", "json"])
    out = capsys.readouterr().out
    assert code == EXIT_USAGE
    problem = json.loads(out)["problem"]
    assert problem["kind"] == "invalid_input"
    assert str(DEFAULT_MAX_MESSAGE_BYTES) in problem["message"]


def test_stdin_over_the_message_limit_is_refused(server: ServerThread) -> None:
    done = subprocess.run(
        tied([*PACKCTL, "call", "test.echo", "--input", "-", "--target", server.target]),
        env=subprocess_env(),
        input=_too_big(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert b"larger than" in done.stderr and b"Traceback" not in done.stderr


def test_stdin_and_non_utf8_files_reach_the_server(
    capsys: pytest.CaptureFixture[str], server: ServerThread, tmp_path: Path
) -> None:
    """``--input -`` is read from stdin; a file that is not UTF-8 is the server's invalid
    input (exit 2), not a crash of the CLI."""
    done = subprocess.run(
        tied([*PACKCTL, "call", "test.echo", "--input", "-", "--target", server.target]),
        env=subprocess_env(),
        input=b'{"a": 1}',
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert b'"a": 1' in done.stdout
    latin = tmp_path / "latin1.json"
    latin.write_bytes(b'{"a": "caf\xe9"}')
    target = ["--target", server.target, "--output", "json"]
    code = main(["call", "test.echo", "--input", f"@{latin}", *target])
    assert code == EXIT_USAGE
    assert json.loads(capsys.readouterr().out)["problem"]["kind"] == "invalid_input"
    code = main(["call", "test.fail", "--input", '{"code": "not_found"}', *target])
    assert code == EXIT_PACK_ERROR


def test_non_utf8_command_line_input_is_sent_as_its_bytes(
    capsys: pytest.CaptureFixture[str], server: ServerThread
) -> None:
    """``--input $'\\xff'``: Python hands argv over as a lone surrogate, and
    ``spec.encode()`` raised UnicodeEncodeError (a traceback). The bytes go as they came;
    the server refuses them as invalid input (exit 2)."""
    code = main(["call", "test.echo", "--input", "\udcff", "--target", server.target])
    assert code == EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err
