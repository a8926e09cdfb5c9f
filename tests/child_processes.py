"""Servers a test starts end with the test run, even when pytest is killed outright.

A fixture stops its server on teardown, which a ``SIGKILL``ed pytest (a CI timeout, an
interrupted run) never reaches; a server in a session of its own (``start_new_session``)
then lives on, holding its port and its CPU. :func:`tied` prefixes a command with a small
launcher that asks the kernel for ``SIGKILL`` when its parent dies
(``prctl(PR_SET_PDEATHSIG)``, which survives ``exec``) and then ``exec``\\ s the command:
the same pid, argv and environment, no ``preexec_fn`` (unsafe in a process with threads, as
pytest with gRPC is).

The kernel ties the signal to the *thread* that forked the child: a command started from a
thread other than the main one is returned unchanged (it would die when that thread ends),
and so is every command off Linux.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["stop", "tied"]

# argv[1] is the parent's pid: a parent that died before the request was made is caught by
# comparing it afterwards (the child is then re-parented and would never get the signal).
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(70)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def tied(argv: Sequence[str]) -> list[str]:
    """``argv`` run so that it is killed when this process dies (see the module)."""
    command = [str(part) for part in argv]
    if not sys.platform.startswith("linux") or threading.current_thread() is not (
        threading.main_thread()
    ):
        return command
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), *command]


def stop(proc: subprocess.Popen[Any], grace: float = 10.0) -> int:
    """End ``proc``: ``SIGTERM``, then ``SIGKILL`` if it is still there after ``grace``.

    A teardown must not fail the test run because a helper server is slow to act on
    ``SIGTERM`` (a loaded CI machine, a handler thread in a long write, a signal the
    environment that started pytest ignores, which a child inherits across ``exec``):
    ``SIGKILL`` cannot be ignored. Returns the exit status."""
    if proc.poll() is None:
        proc.terminate()
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait(30)
