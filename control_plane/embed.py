"""Embedding capability-packs in your own program: run packs, serve them, call them."""

from control_plane.core.errors import InvalidInput, RequestRejected, UnknownPack
from control_plane.core.outcome import CheckRecord, ErrorEnvelope, Outcome, ValidationRecord
from control_plane.core.registry import LoadedPack, LoadFailure
from control_plane.core.rejection import REASONS, Rejection
from control_plane.core.vocabulary import BASELINE, CodeInfo
from control_plane.runtime.incident_store import IncidentStore
from control_plane.runtime.plugins import DEFAULT_PLUGINS, ENTRY_POINT_GROUP, ENV_PLUGINS
from control_plane.runtime.runtime import (
    DEFAULT_TIMEOUT,
    TRUST_ALL,
    Runtime,
    RuntimeConfig,
    build_runtime,
)
from control_plane.wire.auth import ClientTls
from control_plane.wire.client import (
    ArtifactFailed,
    AsyncClient,
    AuthFailed,
    Client,
    DeadlineExceeded,
    InternalError,
    NetworkError,
    NotFound,
    Overloaded,
    PackCallError,
    PermanentError,
    RateLimited,
    RetryableError,
    RetryPolicy,
    SchemaMismatch,
    Timeout,
    TransportError,
    Unauthenticated,
)
from control_plane.wire.server import PackServer, ServerOptions, create_server, serve
from control_plane.wire.status import service_config

__all__ = [
    "BASELINE",
    "DEFAULT_PLUGINS",
    "DEFAULT_TIMEOUT",
    "ENTRY_POINT_GROUP",
    "ENV_PLUGINS",
    "REASONS",
    "TRUST_ALL",
    "ArtifactFailed",
    "AsyncClient",
    "AuthFailed",
    "CheckRecord",
    "Client",
    "ClientTls",
    "CodeInfo",
    "DeadlineExceeded",
    "ErrorEnvelope",
    "IncidentStore",
    "InternalError",
    "InvalidInput",
    "LoadFailure",
    "LoadedPack",
    "NetworkError",
    "NotFound",
    "Outcome",
    "Overloaded",
    "PackCallError",
    "PackServer",
    "PermanentError",
    "RateLimited",
    "Rejection",
    "RequestRejected",
    "RetryPolicy",
    "RetryableError",
    "Runtime",
    "RuntimeConfig",
    "SchemaMismatch",
    "ServerOptions",
    "Timeout",
    "TransportError",
    "Unauthenticated",
    "UnknownPack",
    "ValidationRecord",
    "build_runtime",
    "create_server",
    "serve",
    "service_config",
]
