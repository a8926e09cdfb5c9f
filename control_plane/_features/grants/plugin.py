"""The grants feature on the runtime's hooks: the runner of packs' programs. The grant
checks themselves are the kernel's (``_kernel/reach.py``) and hold without this feature:
a runtime without it refuses every program (docs/grants.md)."""

from __future__ import annotations

from control_plane._features.grants.tool_process import run_program
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.reach import ProgramRunner

__all__ = ["program_runner"]


@hookimpl
def program_runner() -> ProgramRunner:
    """Programs run confined by the kernel's grant (Landlock, environment, ports)."""
    return run_program
