"""A child process that ends with its parent (``PR_SET_PDEATHSIG`` on Linux)."""

from __future__ import annotations

import contextlib
import ctypes
import sys

__all__ = ["signal_on_parent_death"]

_PR_SET_PDEATHSIG = 1


def signal_on_parent_death(signum: int) -> bool:
    """Ask for ``signum`` when the parent process dies (strictly: the thread that forked
    this child exits); False where it cannot be asked (not Linux, or the call failed): the
    caller then watches the parent itself."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signum) == 0)
    return False
