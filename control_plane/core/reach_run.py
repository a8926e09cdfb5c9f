"""Running a granted program for a pack: bounded, cancellable, scrubbed environment.

:func:`run_granted` is what ``ctx.reach.run`` does: the program must be granted
(:meth:`~control_plane.core.reach.PackReach.program`), the environment is the reach's
(:meth:`~control_plane.core.reach.PackReach.environment`), the child leads a session of its own
and its whole group is killed when time runs out, when the call is cancelled
(``ctx.cancelled``, looked at every :data:`TICK` seconds) or when ``on_stdout`` says it has
read enough (``git ls-remote`` past ``limit``: bounded memory whatever the remote sends).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from control_plane.core.errors import PackError
from control_plane.core.stderr import ToolRun, tool_name

if TYPE_CHECKING:
    from control_plane.core.pack import Context
    from control_plane.core.reach import PackReach

__all__ = ["STDERR_KEEP", "TICK", "run_granted"]

#: How often a running program's call is checked for cancellation (seconds).
TICK = 0.1
#: The most of a program's stderr kept (its tail).
STDERR_KEEP = 256 * 1024
_CHUNK = 65536


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def run_granted(
    reach: PackReach,
    argv: Sequence[str],
    *,
    timeout: float,
    ctx: Context | None = None,
    env: Mapping[str, str] | None = None,
    drop: Callable[[str], bool] | None = None,
    cwd: str | None = None,
    pass_fds: Sequence[int] = (),
    on_stdout: Callable[[bytes], bool] | None = None,
    tool: str | None = None,
    program: str | None = None,
) -> tuple[ToolRun, bool]:
    """Run ``argv`` (its program granted) to completion; the run and whether ``on_stdout``
    stopped it early. ``program`` is the name the grant is checked for (default
    ``argv[0]``: a pack passes ``"git"`` when the operator points ``$CAPABILITY_PACKS_GIT``
    at another binary). ``on_stdout`` receives stdout as it comes (then not kept) and returns
    False to stop the program. Raises ``timeout`` (time ran out or the call was cancelled),
    ``dependency_missing`` (no such program), ``not_permitted`` (not granted)."""
    label = tool or tool_name(argv) or "tool"
    reach.program(program or argv[0])
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=reach.environment(env, drop),
            cwd=cwd,
            pass_fds=tuple(pass_fds),
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise PackError(
            "dependency_missing", f"{label} is not installed or not executable on this host"
        ) from exc
    deadline = time.monotonic() + max(0.0, timeout)
    pump = _Pump(proc, on_stdout)
    try:
        ended = pump.run(deadline, ctx)
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

    def _ending(self, deadline: float, ctx: Context | None) -> str | None:
        if ctx is not None and ctx.cancelled:
            return "cancelled"
        if time.monotonic() >= deadline:
            return "late"
        return None

    def run(self, deadline: float, ctx: Context | None) -> str:
        """``"done"``, ``"cancelled"`` or ``"late"`` (the group killed for the last two)."""
        while self.sel.get_map():
            ending = self._ending(deadline, ctx)
            if ending is not None:
                return self._kill(ending)
            for key, _ in self.sel.select(min(TICK, max(0.0, deadline - time.monotonic()))):
                self._read(key)
        while self.proc.poll() is None:  # both pipes closed: the process ends now
            ending = self._ending(deadline, ctx)
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
