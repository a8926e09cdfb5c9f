"""The servers tests start end with the test run, even when pytest is killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from child_processes import tied

# Starts processes (docs/setup.md, 'Test tiers').
pytestmark = pytest.mark.system

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]

# A parent that starts a child (tied or not), prints the child's pid and waits to be killed.
PARENT = """
import subprocess, sys
sys.path.insert(0, sys.argv[1])
from child_processes import tied
argv = [sys.executable, "-c", "import time; time.sleep(120)"]
child = subprocess.Popen(tied(argv) if sys.argv[2] == "tied" else argv)
print(child.pid, flush=True)
child.wait()
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _orphan_after_parent_killed(mode: str, wait: float) -> tuple[int, bool]:
    """Kill a parent holding a ``mode`` child with SIGKILL; whether the child outlives it."""
    tests = os.path.dirname(os.path.abspath(__file__))
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, tests, mode], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert _alive(child)
    parent.kill()
    parent.wait(10)
    deadline = time.monotonic() + wait
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    return child, _alive(child)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_tied_child_dies_with_its_killed_parent() -> None:
    child, alive = _orphan_after_parent_killed("tied", wait=10)
    assert not alive, f"pid {child} outlived its SIGKILLed parent"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_an_untied_child_outlives_its_killed_parent() -> None:
    """The control: what the fixtures did before, and why they now tie their servers."""
    child, alive = _orphan_after_parent_killed("plain", wait=1)
    try:
        assert alive
    finally:
        os.kill(child, signal.SIGKILL)


def test_tied_runs_the_command_itself() -> None:
    """Same pid, argv, environment and exit status: the launcher ``exec``s the command."""
    probe = "import os, sys; print(os.getpid(), sys.argv[1:], os.environ['TIED_PROBE'])"
    proc = subprocess.Popen(
        tied([sys.executable, "-c", probe + "; sys.exit(3)", "a b", "c"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TIED_PROBE": "kept"},
    )
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, err
    pid, rest = out.split(" ", 1)
    assert (int(pid), rest.strip()) == (proc.pid, "['a b', 'c'] kept")


def test_tied_leaves_commands_from_other_threads_alone() -> None:
    seen: list[list[str]] = []
    thread = threading.Thread(target=lambda: seen.append(tied(SLEEPER)))
    thread.start()
    thread.join()
    assert seen == [SLEEPER]
