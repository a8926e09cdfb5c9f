"""Hostile isolated packs against a real ``packctl serve``: what a worker leaves behind.

A worker killed at its deadline or dead mid-call must not leave its children running: an
orphaned child keeps running the pack's work unsupervised, and holds the worker's output
pipe (the scrubbing relay keeps one descriptor open per such pipe in the control plane).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hostilepacks import SECRET
from raw_wire import Serve, invoke
from tiers import starts_processes

PACK = "hostile.iso"


def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds pass."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture(scope="module")
@starts_processes
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    db = tmp_path_factory.mktemp("isolation-hostile") / "incidents.db"
    with Serve(db, "--isolation-workers", "1") as server:
        yield server


def _running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead and waiting for its reaper, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _child(pidfile: Path) -> int:
    pid = int(pidfile.read_text())
    assert pid > 0
    return pid


def _reap_child(pid: int) -> None:
    if _running(pid):
        os.kill(pid, 9)


@pytest.mark.system
@pytest.mark.parametrize(
    ("mode", "timeout", "code"),
    [("spawn_and_hang", 6.0, "timeout"), ("spawn_and_exit", 30.0, "internal_error")],
)
def test_a_worker_that_is_killed_or_dies_takes_its_children(
    served: Serve, tmp_path: Path, mode: str, timeout: float, code: str
) -> None:
    pidfile = tmp_path / "child.pid"
    # A call first, so the worker is up: the deadline then covers the pack's own work, not
    # the start of a worker on a loaded machine (ci, load 10+: no child within 3 s).
    assert invoke(served.channel, PACK, {"mode": "ok"}).code == "ok"
    got = invoke(served.channel, PACK, {"mode": mode, "pidfile": str(pidfile)}, timeout=timeout)
    assert got.code == code, (got.code, got.message)
    child = _child(pidfile)
    try:
        assert wait_until(lambda: not _running(child), 30), (
            f"the worker's child {child} outlived it"
        )
    finally:
        _reap_child(child)
    assert invoke(served.channel, PACK, {"mode": "ok"}).code == "ok"
    assert served.alive()


def test_a_child_left_running_by_a_call_ends_when_the_worker_is_replaced(
    served: Serve, tmp_path: Path
) -> None:
    """A call that returned leaves its child running in the worker (the pack's business),
    but once that worker is gone (here: it dies on the next call), so is the child."""
    pidfile = tmp_path / "child.pid"
    got = invoke(served.channel, PACK, {"mode": "spawn_and_return", "pidfile": str(pidfile)})
    assert got.code == "ok"
    child = _child(pidfile)
    try:
        assert _running(child)
        died = invoke(
            served.channel, PACK, {"mode": "spawn_and_exit", "pidfile": str(tmp_path / "b")}
        )
        assert died.code == "internal_error"
        second = _child(tmp_path / "b")
        try:
            assert wait_until(lambda: not _running(child) and not _running(second), 30)
        finally:
            _reap_child(second)
    finally:
        _reap_child(child)


@pytest.mark.system
def test_a_pack_flooding_stderr_is_cut_to_its_budget(tmp_path: Path) -> None:
    """100 MB printed by an isolated pack: the control plane's stderr gets the first
    BURST bytes (scrubbed) and a line saying how much was dropped, not 100 MB."""
    with Serve(tmp_path / "incidents.db", "--isolation-workers", "1") as server:
        got = invoke(server.channel, PACK, {"mode": "flood", "mb": 100}, timeout=120)
        assert got.code == "ok"

        def reported() -> bool:  # the next output within the budget brings the count
            invoke(server.channel, PACK, {"mode": "print_secret", "tag": "after"})
            return any("bytes of this process's output dropped" in x for x in server.stderr)

        assert wait_until(reported, 60)
        # Each relayed line names its worker: "[isolated worker of PACK] eeee...".
        flood = [line for line in server.stderr if line.partition("] ")[2].startswith("eeee")]
        relayed = sum(len(line) for line in flood)
        assert 0 < relayed < 100_000_000 // 4, relayed
        assert not any(SECRET in line for line in server.stderr)
        assert invoke(server.channel, "hostile.noop", {}).code == "ok"
