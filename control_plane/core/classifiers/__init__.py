"""Built-in ``classify_exception`` plugins, one per library, knowing exceptions by class name."""

from __future__ import annotations

__all__ = ["BUILTIN_CLASSIFIERS"]

#: The built-in classifier plugins, in the order they are asked (after every other plugin).
BUILTIN_CLASSIFIERS: tuple[str, ...] = (
    "control_plane.core.classifiers.tls",
    "control_plane.core.classifiers.subprocess",
    "control_plane.core.classifiers.sockets",
    "control_plane.core.classifiers.proxy",
    "control_plane.core.classifiers.grpc",
    "control_plane.core.classifiers.libraries",
    "control_plane.core.classifiers.websockets",
)
