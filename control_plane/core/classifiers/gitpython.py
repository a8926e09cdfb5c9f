"""GitPython (``git.exc``): git run by a library, its stderr quoted in the exception.

* ``git.exc.GitCommandError`` carries the command (``command``), git's exit status
  (``status``) and git's stderr (``stderr``, quoted as ``"\\n  stderr: '...'"``): the git
  table of :data:`~control_plane.core.stderr.TOOL_TABLES` is applied to them, exactly as
  to a ``subprocess.CalledProcessError`` from running ``git`` directly; no match ->
  nothing (``internal_error``).
* :data:`TYPES`: ``Repo()`` of a path that does not exist or is no repository (as git's own
  "not a git repository" is ``not_found``). A missing git executable
  (``GitCommandNotFound``) is ``dependency_missing`` by the ``FileNotFoundError`` it wraps.

The ``git`` package is not imported here: its exceptions are recognised by class name.
"""

from __future__ import annotations

from control_plane.core.classifiers._data import type_rules
from control_plane.core.classify import (
    Classification,
    class_names,
    match_type_rules,
    safe_attr,
)
from control_plane.core.hookspecs import hookimpl
from control_plane.core.stderr import TOOL_TABLES

__all__ = ["TYPES", "classify_exception"]

PLUGIN = "gitpython"

TYPES = type_rules("gitpython")

#: How GitPython quotes git's stderr in ``GitCommandError.stderr``.
_QUOTE_START = "\n  stderr: '"


def _unquoted(stderr: str) -> str:
    """git's own stderr from GitPython's quoting (so rules anchored at ``^`` still match)."""
    if stderr.startswith(_QUOTE_START):
        stderr = stderr[len(_QUOTE_START) :]
        if stderr.endswith("'"):
            stderr = stderr[:-1]
    return stderr


def _command_error(exc: BaseException) -> Classification | None:
    if ("git.exc", "GitCommandError") not in class_names(type(exc)):
        return None
    stderr = safe_attr(exc, "stderr")
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    status = safe_attr(exc, "status")
    found = TOOL_TABLES["git"].classify(
        status if isinstance(status, int) and not isinstance(status, bool) else None,
        _unquoted(stderr) if isinstance(stderr, str) else None,
    )
    return found.for_plugin(PLUGIN) if found is not None else None


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """A GitPython exception: git's stderr by the git table, or by type (:data:`TYPES`)."""
    return _command_error(exc) or match_type_rules(exc, TYPES, PLUGIN)
