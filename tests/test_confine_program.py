"""The one place a pack's programs are confined (``_features/grants/confine_program.py``), alone:
files, TCP ports, signals, the wrapper's own hygiene. Real processes under the real kernel.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from control_plane._features.grants import confine_program
from control_plane._features.grants.confine_program import ENV_SPEC, abi, wrap

pytestmark = pytest.mark.system  # it starts processes

#: The system interpreter (a shim on PATH may live in a home the confinement hides).
PYTHON = "/usr/bin/python3"
if not os.path.exists(PYTHON):
    pytest.skip("no /usr/bin/python3", allow_module_level=True)


@pytest.fixture(autouse=True)
def _landlock() -> None:
    if abi() <= 0:
        pytest.skip(confine_program.support_line())


def run(
    code: str,
    *,
    reads: Iterable[str] = (),
    writes: Iterable[str] = (),
    connect: Iterable[int] | None = (),
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python3 -c code`` started through :func:`wrap`."""
    argv, child_env = wrap(
        [PYTHON, "-c", code],
        env if env is not None else {"PATH": "/usr/bin:/bin"},
        reads=reads,
        writes=writes,
        connect=connect,
    )
    return subprocess.run(
        argv, env=child_env, cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def test_files_outside_the_roots_are_refused(tmp_path: Path) -> None:
    readable, writable, outside = tmp_path / "r", tmp_path / "w", tmp_path / "o"
    for d in (readable, writable, outside):
        d.mkdir()
    (readable / "a").write_text("readable\n")
    (outside / "b").write_text("outside\n")
    code = f"""
def attempt(what, f):
    try:
        f()
        print(what, "ok")
    except OSError as exc:
        print(what, type(exc).__name__)
attempt("read-root", lambda: open({str(readable / "a")!r}).read())
attempt("read-outside", lambda: open({str(outside / "b")!r}).read())
attempt("write-root", lambda: open({str(writable / "c")!r}, "w").write("x"))
attempt("write-read-root", lambda: open({str(readable / "d")!r}, "w").write("x"))
attempt("home", lambda: open(os.path.expanduser("~/.bashrc")).read())
attempt("etc-shadow", lambda: open("/etc/shadow").read())
print("nnp", [l for l in open("/proc/self/status") if l.startswith("NoNewPrivs")][0].split()[1])
"""
    done = run("import os\n" + code, reads=[str(readable)], writes=[str(writable)])
    assert done.returncode == 0, done.stderr
    lines = set(done.stdout.splitlines())
    assert {
        "read-root ok",
        "read-outside PermissionError",
        "write-root ok",
        "write-read-root PermissionError",
        "etc-shadow PermissionError",
        "nnp 1",
    } <= lines, lines
    assert "home ok" not in lines
    assert (writable / "c").read_text() == "x"


@pytest.fixture
def listeners() -> Iterator[list[int]]:
    socks = []
    for _ in range(2):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        socks.append(sock)
    yield [int(s.getsockname()[1]) for s in socks]
    for sock in socks:
        sock.close()


_CONNECT = """
import socket, sys
for port in map(int, sys.argv[1:]):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        print(port, "connected")
    except OSError as exc:
        print(port, type(exc).__name__)
    s.close()
"""


def _connects(listeners: list[int], connect: Iterable[int] | None) -> dict[int, str]:
    argv, env = wrap(
        [PYTHON, "-c", _CONNECT, *map(str, listeners)],
        {"PATH": "/usr/bin:/bin"},
        reads=(),
        writes=(),
        connect=connect,
    )
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True)
    return {int(p): what for p, what in (line.split() for line in done.stdout.splitlines())}


def test_tcp_connect_only_to_the_checked_port(listeners: list[int]) -> None:
    if abi() < 4:
        pytest.skip("Landlock ABI < 4 restricts no TCP port")
    first, second = listeners
    assert _connects(listeners, [first]) == {first: "connected", second: "PermissionError"}
    assert _connects(listeners, []) == {first: "PermissionError", second: "PermissionError"}
    assert _connects(listeners, None) == {first: "connected", second: "connected"}


def test_no_signals_outside_its_domain() -> None:
    if abi() < 6:
        pytest.skip("Landlock ABI < 6 scopes no signals")
    victim = subprocess.Popen(["sleep", "30"])
    try:
        done = run(
            f"import os, signal\ntry:\n    os.kill({victim.pid}, signal.SIGKILL)\n"
            "    print('killed')\nexcept OSError as exc:\n    print(type(exc).__name__)"
        )
        assert done.stdout.strip() == "PermissionError", done
        assert victim.poll() is None
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()


def test_the_wrapper_runs_nothing_of_the_working_directory(tmp_path: Path) -> None:
    """The program may start in a caller's clone: a ``json.py`` or ``ctypes`` there is not
    imported by the wrapper (``python -I``), and the spec does not reach the program."""
    marker = tmp_path / "ran"
    for name in ("json.py", "ctypes.py", "importlib.py", "os.py"):
        (tmp_path / name).write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    done = run(
        f"import os\nprint(os.environ.get({ENV_SPEC!r}, 'absent'))",
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "absent"
    assert not marker.exists()


def test_a_missing_program_is_file_not_found() -> None:
    with pytest.raises(FileNotFoundError):
        wrap(["no-such-program-here"], {"PATH": "/nonexistent"}, reads=(), writes=(), connect=())


def test_the_pack_file_descriptor_stays_readable(tmp_path: Path) -> None:
    """A pack passes a checked file as an open descriptor (``/proc/self/fd/N``): inside the
    grant it is read; the same object reopened outside the grant is not."""
    inside = tmp_path / "in"
    inside.mkdir()
    (inside / "m").write_text("media\n")
    fd = os.open(inside / "m", os.O_RDONLY)
    try:
        argv, env = wrap(
            [PYTHON, "-c", f"print(open('/proc/self/fd/{fd}').read().strip())"],
            {"PATH": "/usr/bin:/bin"},
            reads=[str(inside)],
            writes=(),
            connect=(),
        )
        done = subprocess.run(
            argv, env=env, pass_fds=(fd,), capture_output=True, text=True, timeout=60, check=False
        )
        assert done.stdout.strip() == "media", done.stderr
        argv, env = wrap(
            [PYTHON, "-c", f"print(open('/proc/self/fd/{fd}').read().strip())"],
            {"PATH": "/usr/bin:/bin"},
            reads=[],
            writes=(),
            connect=(),
        )
        done = subprocess.run(
            argv, env=env, pass_fds=(fd,), capture_output=True, text=True, timeout=60, check=False
        )
        assert "PermissionError" in done.stderr
    finally:
        os.close(fd)
