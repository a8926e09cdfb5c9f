"""A child process that ends with its parent: the kernel's parent-death signal.

Isolation workers (``SIGKILL``) and ``serve --workers`` workers (``SIGTERM``: a drain) must
not outlive the process that started them. On Linux ``prctl(PR_SET_PDEATHSIG)`` asks the
kernel to send a signal when the parent (strictly: the thread that forked the child) exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys

__all__ = ["signal_on_parent_death"]

_PR_SET_PDEATHSIG = 1


def signal_on_parent_death(signum: int) -> bool:
    """Ask for ``signum`` when the parent process dies; False where it cannot be asked
    (not Linux, or the call failed): the caller then watches the parent itself."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signum) == 0)
    return False
