"""Where an exception was raised: a bounded look at its traceback's frames."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import FrameType

__all__ = [
    "MAX_FRAMES",
    "ORIGIN_ATTR",
    "frame_locals",
    "frames",
    "locals_of",
    "mark_origin",
    "names_called",
    "origin",
    "uvloop_frame",
]

#: Attribute recording where an ``OSError`` came from (``exec``, ``af_unix``,
#: ``pipe_to_child``), set by :func:`mark_origin` before an exception leaves an isolated
#: worker: the traceback's frames do not cross the process boundary, this fact does.
ORIGIN_ATTR = "capability_packs_origin"

#: Frames looked at, innermost first.
MAX_FRAMES = 12


def frames(exc: BaseException) -> list[FrameType]:
    """The frames of ``exc``'s traceback, innermost first, at most :data:`MAX_FRAMES`."""
    found: list[FrameType] = []
    tb = exc.__traceback__
    while tb is not None:
        found.append(tb.tb_frame)
        tb = tb.tb_next
    return found[::-1][:MAX_FRAMES]


def names_called(exc: BaseException) -> frozenset[str]:
    """The names the innermost frame of ``exc``'s traceback refers to (its code's
    ``co_names``: attributes, globals and methods it uses), or an empty set. No bytecode is
    read: a method named here may be the one that raised (``self.ctx.load_cert_chain``)."""
    innermost = frames(exc)[:1]
    return frozenset(innermost[0].f_code.co_names) if innermost else frozenset()


def locals_of(frame: FrameType) -> dict[str, object]:
    """A copy of ``frame``'s local variables (empty when they cannot be read)."""
    try:
        return dict(frame.f_locals)
    # Hostile input: a frame's locals mapping may be anything in odd interpreters.
    except Exception:  # noqa: BLE001
        return {}


def frame_locals(exc: BaseException) -> Iterator[tuple[FrameType, object]]:
    """``(frame, value)`` for each local variable of each frame, innermost frame first."""
    for frame in frames(exc):
        for value in locals_of(frame).values():
            yield frame, value


def uvloop_frame(exc: BaseException, names: frozenset[str]) -> bool:
    """Whether ``exc`` was raised through one of uvloop's functions ``names`` (the last
    part of a Cython frame's name: ``UVProcess._init`` -> ``_init``).

    uvloop (``packctl serve --loop``) is compiled: its frames carry a name but no locals,
    so the rules that read the standard loop's locals (an ``AF_UNIX`` socket, ``cwd``)
    recognize its functions by name instead."""
    for frame in frames(exc):
        if frame.f_globals.get("__name__") != "uvloop.loop":
            continue
        if frame.f_code.co_name.rpartition(".")[2] in names:
            return True
    return False


def origin(exc: BaseException) -> str | None:
    """The origin :func:`mark_origin` recorded on ``exc``, if any."""
    try:
        value = getattr(exc, ORIGIN_ATTR, None)
    # Hostile input: a property may raise anything.
    except Exception:  # noqa: BLE001
        return None
    return value if isinstance(value, str) else None


def mark_origin(exc: BaseException) -> None:
    """Record, as data on ``exc``, what only its frames show (see :data:`ORIGIN_ATTR`). What
    only live objects answer (a gRPC error's status) is recorded by the plugin that reads it
    (``control_plane._features.libraries.grpc.mark_status``)."""
    from control_plane._kernel.classifiers import sockets, subprocess

    found = subprocess.frame_origin(exc) or sockets.frame_origin(exc)
    if found is not None:
        # Some exception types refuse new attributes (slots); the fact is then lost.
        with contextlib.suppress(AttributeError, TypeError):
            setattr(exc, ORIGIN_ATTR, found)
