"""Typed errors for pack handlers: raise these, or return ``{"error": {...}}``."""

from control_plane._kernel.errors import (
    CapabilityPackError,
    FieldViolation,
    InvalidInput,
    PackError,
    PluginLoadError,
    RequestRejected,
    UnknownPack,
    artifact_failed,
    auth_failed,
    network_error,
    not_found,
    rate_limited,
    schema_mismatch,
    timeout,
)
from control_plane._kernel.reach import NotARegularFile, not_permitted

__all__ = [
    "CapabilityPackError",
    "FieldViolation",
    "InvalidInput",
    "NotARegularFile",
    "PackError",
    "PluginLoadError",
    "RequestRejected",
    "UnknownPack",
    "artifact_failed",
    "auth_failed",
    "network_error",
    "not_found",
    "not_permitted",
    "rate_limited",
    "schema_mismatch",
    "timeout",
]
