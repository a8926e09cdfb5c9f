"""Built-in classifier plugins: what the common libraries' exceptions mean.

Each module here is a plugin implementing the ``classify_exception`` hook exactly as a
third-party plugin would, and holds the table for one library (or family): exceptions are
recognised by class name and module along the MRO (:class:`~control_plane.core.classify.TypeRule`),
so none of these modules imports the library it knows about, and a pack that does not use
httpx never loads httpx. The tables are documented in ``docs/classification.md``, generated
from them by ``python scripts/gen_classification_docs.py``.
"""

from __future__ import annotations

__all__ = ["BUILTIN_CLASSIFIERS"]

#: The built-in classifier plugins, in the order they are asked (after every other plugin).
BUILTIN_CLASSIFIERS: tuple[str, ...] = (
    "control_plane.core.classifiers.tls",
    "control_plane.core.classifiers.subprocess",
    "control_plane.core.classifiers.gitpython",
    "control_plane.core.classifiers.sockets",
    "control_plane.core.classifiers.proxy",
    "control_plane.core.classifiers.grpc",
    "control_plane.core.classifiers.httpx",
    "control_plane.core.classifiers.requests",
    "control_plane.core.classifiers.aiohttp",
    "control_plane.core.classifiers.websockets",
    "control_plane.core.classifiers.smtp",
    "control_plane.core.classifiers.xmlrpc",
    "control_plane.core.classifiers.ftp",
    "control_plane.core.classifiers.imap",
    "control_plane.core.classifiers.pop",
    "control_plane.core.classifiers.sqlite",
)
