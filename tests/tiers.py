"""The two test tiers, by cost (docs/setup.md, "Test tiers").

The fast tier runs in this process: a test is ``system`` when it starts a process (a program
such as git, ffprobe or node, the venv's own Python, ``packctl serve``, a fork, a
multiprocessing child, a daemon) or is ``slow``. The POSIX basics below (``sh``, ``sleep``,
...) cost milliseconds and do not count. An audit hook sees every process the test process
starts; a test not marked ``system`` that starts one fails and names it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Sequence
from typing import Any, TypeVar

import pytest

# Programs every POSIX system has; starting them does not make a test a system test.
BASE_PROGRAMS = frozenset({"sh", "bash", "sleep", "true", "false", "cat", "env", "kill"})
_F = TypeVar("_F")
_STARTS_PROCESSES = "__starts_processes__"

_started: list[str] | None = None  # programs from outside the venv, while a fast test runs


def started_program(executable: object) -> str | None:
    """The process ``executable`` starts, unless it is one of the POSIX basics, else None."""
    if isinstance(executable, bytes):
        executable = os.fsdecode(executable)
    if not isinstance(executable, str | os.PathLike):
        return "?"
    name = os.fspath(executable)
    return None if os.path.basename(name) in BASE_PROGRAMS else name


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _started is None:
        return
    if event in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
        program = started_program(args[0])
    elif event in ("os.fork", "os.forkpty"):
        program = "fork()"
    else:
        return
    if program is not None:
        _started.append(program)


sys.addaudithook(_audit)


def _watch_spawnv_passfds() -> None:
    """multiprocessing starts its fork server and spawned children through
    ``_posixsubprocess.fork_exec``, which raises no audit event: note them here."""
    import multiprocessing.util as mp_util

    original = mp_util.spawnv_passfds

    def spawnv_passfds(path: Any, args: Any, passfds: Any) -> Any:
        _audit("subprocess.Popen", (path, args, None, None))
        return original(path, args, passfds)

    mp_util.spawnv_passfds = spawnv_passfds  # type: ignore[assignment]

    # A child forked by an already running fork server starts no program in this process
    # at all: note each one where it is asked for.
    import multiprocessing.forkserver as mp_forkserver

    server = mp_forkserver.ForkServer
    connect = server.connect_to_new_process

    def connect_to_new_process(self: Any, fds: Any) -> Any:
        _audit("subprocess.Popen", ("forkserver child", (), None, None))
        return connect(self, fds)

    server.connect_to_new_process = connect_to_new_process  # type: ignore[method-assign]


_watch_spawnv_passfds()
# CP_TIER_RECORD=FILE: note the fast tests that start processes in FILE instead of failing
# them (used once to sort the suite into tiers).
_RECORD = os.environ.get("CP_TIER_RECORD")


def pytest_configure(config: pytest.Config) -> None:
    # also in pyproject.toml; here for a session that does not read it (tests/test_tiers.py)
    config.addinivalue_line("markers", "system: needs a program or daemon from outside the venv")
    config.addinivalue_line("markers", "slow: long-running tests (soak, fuzz); also system")


def starts_processes(fixture: _F) -> _F:
    """Mark a fixture that starts processes: every test that uses it is ``system``.

    Put it under ``@pytest.fixture``. A module- or session-scoped fixture starts its
    processes in the setup of its first user only, so the audit alone would catch that one
    test and pass the rest; this carries the mark to all of them."""
    setattr(fixture, _STARTS_PROCESSES, True)
    return fixture


def _uses_a_process_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for defs in info.name2fixturedefs.values():
        for fixturedef in defs:
            if getattr(fixturedef.func, _STARTS_PROCESSES, False):
                return True
    return False


def pytest_collection_modifyitems(items: Sequence[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") is not None or _uses_a_process_fixture(item):
            item.add_marker(pytest.mark.system)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _watched_call(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _watched_call(item))


def _watched_call(item: pytest.Item) -> Generator[None, Any, Any]:
    global _started  # noqa: PLW0603 - the audit hook cannot take arguments
    fast = item.get_closest_marker("system") is None
    _started = [] if fast else None
    try:
        result = yield
    finally:
        started, _started = _started, None
    if started and _RECORD:
        with open(_RECORD, "a", encoding="utf-8") as out:
            out.write(f"{item.nodeid}\t{sorted(set(map(str, started)))}\n")
    elif started:
        pytest.fail(
            f"{item.nodeid} started {sorted(set(map(str, started)))}: a test that starts a "
            "process is a system test: mark it @pytest.mark.system (docs/setup.md, 'Test tiers')",
            pytrace=False,
        )
    return result
