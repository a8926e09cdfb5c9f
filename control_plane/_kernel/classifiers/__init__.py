"""Built-in ``classify_exception`` plugins, one per library, knowing exceptions by class name."""

from __future__ import annotations

__all__ = ["BUILTIN_CLASSIFIERS"]

#: The built-in classifier plugins, in the order they are asked (after every other plugin).
BUILTIN_CLASSIFIERS: tuple[str, ...] = (
    "control_plane._kernel.classifiers.tls",
    "control_plane._kernel.classifiers.subprocess",
    "control_plane._kernel.classifiers.sockets",
    "control_plane._kernel.classifiers.proxy",
    "control_plane._kernel.classifiers.grpc",
    "control_plane._kernel.classifiers.libraries",
    "control_plane._kernel.classifiers.websockets",
)
