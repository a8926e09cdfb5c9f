"""Running a pack's programs: a session of their own, the whole group killed on timeout.

:func:`run_tool` is ``control_plane.tools.run_tool``; :func:`run_program` is the
:class:`~control_plane._kernel.reach.ProgramRunner` behind ``ctx.reach.run`` (each runtime's
:class:`~control_plane._kernel.reach.Reaches` holds it). What a failure means is core's
(``_kernel/stderr.py``); running is here.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence

from control_plane._features.grants.confine_program import wrap
from control_plane._kernel.errors import PackError
from control_plane._kernel.reach import Confinement
from control_plane._kernel.stderr import (
    ToolRun,
    ToolTable,
    raise_for_failure,
    stderr_text,
    tool_name,
)

__all__ = ["STDERR_KEEP", "TICK", "confined", "run_program", "run_tool"]

#: How often a running program's call is checked for cancellation (seconds).
TICK = 0.1
#: The most of a granted program's stderr kept (its tail).
STDERR_KEEP = 256 * 1024
_CHUNK = 65536


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _missing(label: str, code: str) -> PackError:
    return PackError(code, f"{label} is not installed or not executable on this host")


def confined(
    argv: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | None,
    confinement: Confinement | None,
) -> tuple[list[str], dict[str, str] | None, str | None]:
    """``(argv, env, cwd)`` that start ``argv`` held to ``confinement`` by the kernel
    (:mod:`.confine_program`); unchanged for ``None`` (an unconfined pack). The one place
    every program of a pack (and every MCP server) is started through. Without ``cwd`` a
    confined program starts in ``/`` unless the server's own directory is inside its grant
    (git looks for a repository where it starts). Raises ``FileNotFoundError`` for a
    program that is not there, as ``exec`` would."""
    if confinement is None:
        return list(argv), None if env is None else dict(env), cwd
    command, child_env = wrap(
        argv,
        env,
        reads=confinement.reads,
        writes=confinement.writes,
        connect=confinement.connect,
    )
    if cwd is None:
        here = os.path.realpath(os.getcwd())
        roots = (*confinement.reads, *confinement.writes)
        inside = any(here == r or here.startswith(r.rstrip("/") + "/") for r in roots)
        cwd = here if inside else "/"
    return command, child_env, cwd


def run_tool(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    tool: str | None = None,
    check: bool = True,
    table: ToolTable | None = None,
    input: bytes | None = None,
    missing_code: str = "dependency_missing",
    confinement: Confinement | None = None,
) -> ToolRun:
    """Run ``argv`` within ``timeout`` seconds; a failed run raises its classified error.

    :param argv: the command; ``argv[0]``'s base name (or ``tool``) picks the table.
    :param timeout: seconds; past it the process group is killed and ``timeout`` raised.
    :param env: the child's whole environment (run tools with ``LC_ALL=C`` so their
        messages are the English ones the tables know; run wget without ``-q``/``-nv``,
        which hide the status line and TLS errors).
    :param cwd: the child's working directory.
    :param tool: the table to pick when ``argv[0]`` is not the tool's name.
    :param check: raise on a non-zero exit status (default); ``False`` returns the
        :class:`ToolRun` whatever the status, for a pack that reads stderr itself.
    :param table: a :class:`ToolTable` to use instead of the built-in one for the tool.
    :param input: bytes written to the child's stdin.
    :param missing_code: the code raised when the executable is missing or not
        executable (``dependency_missing``, a well-known pack code; a pack that does
        not declare it gets ``internal_error``).
    :param confinement: what the kernel holds the program to (``ctx.reach.confinement()``);
        ``None``: nothing (the serving user's whole reach).
    :return: the finished run (stdout bytes, decoded stderr, exit status).
    :raises PackError: the matched rule's code, ``timeout`` or ``missing_code``.
    :raises ToolFailed: the tool failed and no rule matched (``internal_error``).
    """
    label = tool or tool_name(argv) or "tool"
    try:
        command, child_env, child_cwd = confined(argv, env, cwd, confinement)
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            cwd=child_cwd,
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise _missing(label, missing_code) from exc
    try:
        stdout, stderr = proc.communicate(input=input, timeout=max(0.0, timeout))
    except subprocess.TimeoutExpired as exc:
        _kill_group(proc)
        proc.communicate()
        raise PackError("timeout", f"{label} did not finish within {timeout:.3g}s") from exc
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    done = ToolRun(tuple(argv), proc.returncode, stdout, stderr_text(stderr))
    if check:
        raise_for_failure(done, label, table)
    return done


def run_program(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str],
    cwd: str | None,
    pass_fds: Sequence[int],
    on_stdout: Callable[[bytes], bool] | None,
    cancelled: Callable[[], bool],
    tool: str | None,
    confinement: Confinement | None = None,
) -> tuple[ToolRun, bool]:
    """Run ``argv`` (checked by ``PackReach.run``) to completion, held to ``confinement``;
    the run and whether ``on_stdout`` stopped it early. The group is killed when time runs
    out or ``cancelled()`` (``timeout`` raised for both), and when ``on_stdout`` returns
    False."""
    label = tool or tool_name(argv) or "tool"
    try:
        command, child_env, child_cwd = confined(argv, env, cwd, confinement)
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            cwd=child_cwd,
            pass_fds=tuple(pass_fds),
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise _missing(label, "dependency_missing") from exc
    deadline = time.monotonic() + max(0.0, timeout)
    pump = _Pump(proc, on_stdout)
    try:
        ended = pump.run(deadline, cancelled)
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        pump.close()
    if ended == "cancelled":
        raise PackError("timeout", f"the call was cancelled; {label} was stopped")
    if ended == "late":
        raise PackError("timeout", f"{label} did not finish within {timeout:.3g}s")
    stderr = bytes(pump.err[-STDERR_KEEP:]).decode("utf-8", "replace")
    returncode = 0 if pump.stopped else proc.returncode
    return ToolRun(tuple(argv), returncode, b"".join(pump.out), stderr), pump.stopped


class _Pump:
    """A running program's pipes drained until it ends, is cancelled or runs late."""

    def __init__(
        self, proc: subprocess.Popen[bytes], on_stdout: Callable[[bytes], bool] | None
    ) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.on_stdout = on_stdout
        self.out: list[bytes] = []
        self.err = bytearray()
        self.stopped = False
        self.sel = selectors.DefaultSelector()
        self.sel.register(proc.stdout, selectors.EVENT_READ, "out")
        self.sel.register(proc.stderr, selectors.EVENT_READ, "err")

    def _ending(self, deadline: float, cancelled: Callable[[], bool]) -> str | None:
        if cancelled():
            return "cancelled"
        if time.monotonic() >= deadline:
            return "late"
        return None

    def run(self, deadline: float, cancelled: Callable[[], bool]) -> str:
        """``"done"``, ``"cancelled"`` or ``"late"`` (the group killed for the last two)."""
        while self.sel.get_map():
            ending = self._ending(deadline, cancelled)
            if ending is not None:
                return self._kill(ending)
            for key, _ in self.sel.select(min(TICK, max(0.0, deadline - time.monotonic()))):
                self._read(key)
        while self.proc.poll() is None:  # both pipes closed: the process ends now
            ending = self._ending(deadline, cancelled)
            if ending is not None:
                return self._kill(ending)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(TICK)
        return "done"

    def _read(self, key: selectors.SelectorKey) -> None:
        chunk = os.read(key.fd, _CHUNK)
        if not chunk:
            self.sel.unregister(key.fileobj)
        elif key.data == "err":
            self.err += chunk
            if len(self.err) > 2 * STDERR_KEEP:
                del self.err[: len(self.err) - STDERR_KEEP]
        elif self.on_stdout is None:
            self.out.append(chunk)
        elif not self.stopped and not self.on_stdout(chunk):
            self.stopped = True
            _kill_group(self.proc)

    def _kill(self, ending: str) -> str:
        _kill_group(self.proc)
        self.proc.wait()
        return ending

    def close(self) -> None:
        self.sel.close()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdout.close()
        self.proc.stderr.close()
