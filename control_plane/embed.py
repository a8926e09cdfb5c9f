"""Embedding capability-packs in your own program: run packs, serve them, call them.

::

    from control_plane.embed import RuntimeConfig, build_runtime

    with build_runtime(RuntimeConfig(isolate=("vendor.scanner",))) as runtime:
        outcome = runtime.invoker.invoke_sync("av.validate", {"path": "/tmp/clip.mp4"})

Every failure a caller can receive is either an :class:`Outcome` whose ``error.code`` is
in the pack's vocabulary, or a :class:`Rejection` (raised as :class:`RequestRejected`)
whose ``reason`` is in ``schemas/rejections.json``.
"""

from control_plane.core.errors import InvalidInput, RequestRejected, UnknownPack
from control_plane.core.outcome import CheckRecord, ErrorEnvelope, Outcome, ValidationRecord
from control_plane.core.registry import LoadedPack, LoadFailure
from control_plane.core.rejection import REASONS, Rejection
from control_plane.core.vocabulary import BASELINE, CodeInfo
from control_plane.runtime.plugins import DEFAULT_PLUGINS, ENTRY_POINT_GROUP, ENV_PLUGINS
from control_plane.runtime.runtime import DEFAULT_TIMEOUT, Runtime, RuntimeConfig, build_runtime
from control_plane.wire.client import (
    AsyncClient,
    Client,
    Overloaded,
    PackCallError,
    PermanentError,
    RetryableError,
    RetryPolicy,
    TransportError,
    Unauthenticated,
)
from control_plane.wire.server import PackServer, ServerOptions, create_server, serve

__all__ = [
    "BASELINE",
    "DEFAULT_PLUGINS",
    "DEFAULT_TIMEOUT",
    "ENTRY_POINT_GROUP",
    "ENV_PLUGINS",
    "REASONS",
    "AsyncClient",
    "CheckRecord",
    "Client",
    "CodeInfo",
    "ErrorEnvelope",
    "InvalidInput",
    "LoadFailure",
    "LoadedPack",
    "Outcome",
    "Overloaded",
    "PackCallError",
    "PackServer",
    "PermanentError",
    "Rejection",
    "RequestRejected",
    "RetryPolicy",
    "RetryableError",
    "Runtime",
    "RuntimeConfig",
    "ServerOptions",
    "TransportError",
    "Unauthenticated",
    "UnknownPack",
    "ValidationRecord",
    "build_runtime",
    "create_server",
    "serve",
]
