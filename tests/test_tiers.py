"""The fast tier holds by enforcement: a test that starts a process (a program, the venv's
own Python, a fork, a multiprocessing child) without the ``system`` marker fails
(``tests/tiers.py``, docs/setup.md "Test tiers")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tiers import started_program

HERE = Path(__file__).resolve().parent

_MODULE = """
import subprocess, sys
import pytest

def test_fast_starts_ls():
    subprocess.run(["ls", "/"], check=True, capture_output=True)

@pytest.mark.system
def test_marked_starts_ls():
    subprocess.run(["ls", "/"], check=True, capture_output=True)

def test_fast_starts_the_venvs_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_fast_starts_sh():
    subprocess.run("true", shell=True, check=True)

def test_fast_forks():
    import os
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)

def test_fast_spawns_a_multiprocessing_child():
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    child = ctx.Process(target=print)
    child.start()
    child.join()

@pytest.mark.slow
def test_slow_starts_ls():
    subprocess.run(["ls", "/"], check=True, capture_output=True)
"""


def test_what_counts_as_a_process() -> None:
    assert started_program("sh") is None and started_program("/bin/sleep") is None
    assert started_program(sys.executable) == sys.executable
    ls = shutil.which("ls")
    assert ls is not None
    assert started_program("ls") == "ls" and started_program(ls) == ls
    assert started_program(os.fsencode(ls)) == ls


@pytest.mark.system
def test_a_fast_test_starting_a_process_fails_and_names_it(tmp_path: Path) -> None:
    (tmp_path / "test_mod.py").write_text(_MODULE)
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tiers", "-q", "-p", "no:cacheprovider", "-rA"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = done.stdout
    assert "FAILED test_mod.py::test_fast_starts_ls" in out, out
    assert "started ['ls']: a test that starts a process is a system test" in out, out
    for failing in (
        "fast_starts_the_venvs_python",
        "fast_forks",
        "fast_spawns_a_multiprocessing_child",
    ):
        assert f"FAILED test_mod.py::test_{failing}" in out, out
    for passing in ("marked_starts_ls", "fast_starts_sh"):
        assert f"PASSED test_mod.py::test_{passing}" in out, out
    assert "PASSED test_mod.py::test_slow_starts_ls" in out, out
    selected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tiers",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not system",
            "--co",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    assert "5/7 tests collected" in selected, selected


@pytest.mark.system
def test_a_system_test_may_start_anything() -> None:
    subprocess.run(["ls", "/"], check=True, capture_output=True)
