"""Child processes: failed runs, missing programs, and pipes to children that exited.

* ``subprocess.CalledProcessError`` and GitPython's ``GitCommandError`` (:data:`TOOL_RUNS`)
  -> the tool's table
  (:data:`~control_plane._kernel.stderr.TOOL_TABLES`, picked by the tool name in ``cmd``,
  through ``env``/``timeout``/``nice``/``sh -c`` wrappers)
  applied to its captured ``stderr`` (or ``output`` when stderr was merged into it) and
  its exit status; no table or no match -> nothing (``internal_error``).
* ``FileNotFoundError`` / ``PermissionError`` / ``ENOEXEC`` raised by ``exec`` of the
  program itself (``subprocess``, ``asyncio.create_subprocess_exec``): the program is
  missing or not executable on this host -> ``dependency_missing``, a well-known pack code
  (``internal_error`` for a pack that does not declare it) -- never ``not_found`` (the
  caller named no such file) nor ``auth_failed``. On uvloop (``packctl serve``'s default
  loop) the error names no file: its spawn frame does, unless the ``cwd`` a frame passed
  on is missing (the same ``ENOENT``).
* ``BrokenPipeError`` / ``ConnectionResetError`` writing to a child's stdin after it
  exited -> ``internal_error``: not a network failure.
"""

from __future__ import annotations

import errno
import os
from types import FrameType

from control_plane._kernel.classifiers._data import DATA
from control_plane._kernel.classifiers._frames import (
    frame_locals,
    frames,
    locals_of,
    origin,
    uvloop_frame,
)
from control_plane._kernel.classify import Classification, class_names, safe_attr
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.stderr import classify_tool
from control_plane._kernel.vocabulary import DEPENDENCY_MISSING

__all__ = ["TOOL_RUNS", "classify_exception", "frame_origin"]

PLUGIN = "subprocess"

_EXEC_FRAMES = frozenset({"_execute_child", "_posix_spawn"})
_EXEC_ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.EPERM, errno.ENOEXEC, errno.ENOTDIR})
#: Classes whose presence among a frame's locals shows a write was going to a child
#: (``[subprocess]`` of ``tables.toml``).
_CHILD_TYPES = frozenset(tuple(n.rsplit(".", 1)) for n in DATA["subprocess"]["child_types"])


#: Exceptions of a finished tool run: (class, its argv attribute, exit status attribute,
#: the attributes that may hold its stderr, in order, the plugin named in the rule).
#: GitPython quotes git's stderr as ``"\\n  stderr: '...'"``: unquoted first, so rules
#: anchored at ``^`` still match.
TOOL_RUNS: tuple[tuple[tuple[str, str], str, str, tuple[str, ...], str], ...] = (
    (("subprocess", "CalledProcessError"), "cmd", "returncode", ("stderr", "output"), PLUGIN),
    (("git.exc", "GitCommandError"), "command", "status", ("stderr",), "gitpython"),
)
_QUOTE_START = "\n  stderr: '"


def _unquoted(stderr: str | bytes) -> str | bytes:
    if isinstance(stderr, str) and stderr.startswith(_QUOTE_START):
        stderr = stderr[len(_QUOTE_START) :]
        return stderr[:-1] if stderr.endswith("'") else stderr
    return stderr


def _tool_run(exc: BaseException) -> Classification | None:
    names = class_names(type(exc))
    for klass, argv, status, streams, plugin in TOOL_RUNS:
        if klass not in names:
            continue
        stderr = None
        for stream in streams:
            stderr = safe_attr(exc, stream) or stderr
            if stderr:
                break
        code = safe_attr(exc, status)
        output = safe_attr(exc, streams[-1])
        found = classify_tool(
            safe_attr(exc, argv),
            code if isinstance(code, int) and not isinstance(code, bool) else None,
            _unquoted(stderr) if isinstance(stderr, str | bytes) else None,
            output if isinstance(output, str | bytes) and output is not stderr else None,
        )
        return found.for_plugin(plugin) if found is not None else None
    return None


#: uvloop's spawn (libuv ``uv_spawn``): its exec failures carry no file name.
_UVLOOP_SPAWN = frozenset({"_init"})


def _cwd_in(frame: FrameType) -> object:
    """The ``cwd`` a frame was passing on: a local ``cwd``, or one in its ``**kwds``."""
    local = locals_of(frame)
    if "cwd" in local:
        return local["cwd"]
    for name in ("kwds", "kwargs"):
        extra = local.get(name)
        if isinstance(extra, dict) and "cwd" in extra:
            return extra["cwd"]
    return None


def _missing_cwd(exc: BaseException) -> bool:
    """Whether the spawn was given a ``cwd`` that is not a directory (uvloop reports a
    failed ``chdir`` as the same ``ENOENT`` as a missing program, without a file name).

    uvloop's frames have no locals: the ``cwd`` is read from the frame that called into
    uvloop (``asyncio.create_subprocess_*``, anyio's ``open_process``, or a pack whose
    ``cwd`` is a variable). A ``cwd`` written inline in a pack's own call is not seen: the
    error then stays a missing program."""
    for frame in frames(exc):
        if frame.f_globals.get("__name__") == "uvloop.loop":
            continue
        cwd = _cwd_in(frame)
        return isinstance(cwd, str | bytes | os.PathLike) and not os.path.isdir(cwd)
    return False


def _is_exec_failure(exc: BaseException) -> bool:
    if not isinstance(exc, OSError) or safe_attr(exc, "errno") not in _EXEC_ERRNOS:
        return False
    filename = safe_attr(exc, "filename")
    if filename is None:
        # uvloop: the spawn's frame, and no cwd of the caller's that is missing
        return uvloop_frame(exc, _UVLOOP_SPAWN) and not _missing_cwd(exc)
    for frame in frames(exc):
        if frame.f_code.co_name not in _EXEC_FRAMES:
            continue
        if not frame.f_code.co_filename.endswith("subprocess.py"):
            continue
        cwd = locals_of(frame).get("cwd")
        # chdir(cwd) failed: a directory the caller may have named, not the program
        return cwd is None or str(cwd) != str(filename)
    return False


def _is_pipe_to_child(exc: BaseException) -> bool:
    if not isinstance(exc, BrokenPipeError | ConnectionResetError):
        return False
    for _, value in frame_locals(exc):
        for klass in type(value).__mro__:
            if (getattr(klass, "__module__", ""), klass.__name__) in _CHILD_TYPES:
                return True
    return False


def frame_origin(exc: BaseException) -> str | None:
    """``"exec"`` or ``"pipe_to_child"`` when the traceback's frames show it, else ``None``."""
    if _is_exec_failure(exc):
        return "exec"
    if _is_pipe_to_child(exc):
        return "pipe_to_child"
    return None


def _from_origin(exc: BaseException) -> Classification | None:
    if not isinstance(exc, OSError):
        return None
    found = origin(exc) or frame_origin(exc)
    if found == "exec":
        return Classification(
            code=DEPENDENCY_MISSING,
            message="a program the pack runs is not installed or not executable on this host",
            rule=f"{PLUGIN}:exec",
        )
    if found == "pipe_to_child":
        return Classification(
            code="internal_error",
            message="a child process exited before reading all its input",
            rule=f"{PLUGIN}:broken_pipe",
        )
    return None


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """A failed child process, a missing program, or a pipe to a child that exited."""
    return _tool_run(exc) or _from_origin(exc)
