"""Socket failures the type and errno tables would get wrong.

``FileNotFoundError`` from ``connect()`` on an ``AF_UNIX`` socket means nothing listens at
that path -- the daemon is not running -- exactly like a refused TCP connection, so it is
``network_error``, not ``not_found`` (the caller named no file).
"""

from __future__ import annotations

import errno
import socket

from control_plane._kernel.classifiers._frames import frame_locals, origin, uvloop_frame
from control_plane._kernel.classify import Classification, safe_attr
from control_plane._kernel.hookspecs import hookimpl

__all__ = ["classify_exception", "frame_origin"]

PLUGIN = "sockets"
_NO_LISTENER = "nothing listens on the Unix socket (the service is not running)"


def _unix_socket_in_frames(exc: BaseException) -> bool:
    for _, value in frame_locals(exc):
        if isinstance(value, socket.socket):
            try:
                if value.family == socket.AF_UNIX:
                    return True
            except OSError:
                continue
    return False


#: uvloop's functions that connect an ``AF_UNIX`` socket (its frames have no locals);
#: ``sock_connect`` connects any family, but only an ``AF_UNIX`` connect fails with
#: ``ENOENT``.
_UVLOOP_UNIX_CONNECT = frozenset({"create_unix_connection", "sock_connect", "_sock_connect"})


def frame_origin(exc: BaseException) -> str | None:
    """``"af_unix"`` for ``ENOENT`` without a file name where an ``AF_UNIX`` socket was
    connecting (read from the traceback's frames: the standard loop's locals, uvloop's
    function names), else ``None``."""
    if not isinstance(exc, OSError) or safe_attr(exc, "errno") != errno.ENOENT:
        return None
    if safe_attr(exc, "filename") is not None:
        return None
    if _unix_socket_in_frames(exc) or uvloop_frame(exc, _UVLOOP_UNIX_CONNECT):
        return "af_unix"
    return None


@hookimpl
def classify_exception(exc: BaseException) -> Classification | None:
    """``ENOENT`` without a file name, raised where an ``AF_UNIX`` socket was connecting."""
    if not isinstance(exc, OSError):
        return None
    if (origin(exc) or frame_origin(exc)) != "af_unix":
        return None
    return Classification(code="network_error", message=_NO_LISTENER, rule=f"{PLUGIN}:af_unix")
