"""Embedding capability-packs in your own program: run packs, serve them, call them."""

from control_plane._features.grpc.auth import ClientTls
from control_plane._features.grpc.client import (
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
from control_plane._features.grpc.server import PackServer, ServerOptions, create_server, serve
from control_plane._features.grpc.status import service_config
from control_plane._features.observability.incident_store import IncidentStore
from control_plane._kernel.errors import InvalidInput, RequestRejected, UnknownPack
from control_plane._kernel.outcome import CheckRecord, ErrorEnvelope, Outcome, ValidationRecord
from control_plane._kernel.registry import LoadedPack, LoadFailure
from control_plane._kernel.rejection import REASONS, Rejection
from control_plane._kernel.vocabulary import BASELINE, CodeInfo
from control_plane._runtime.plugins import DEFAULT_PLUGINS, ENTRY_POINT_GROUP, ENV_PLUGINS
from control_plane._runtime.runtime import (
    DEFAULT_TIMEOUT,
    TRUST_ALL,
    Runtime,
    RuntimeConfig,
    build_runtime,
)

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
