"""Typed errors for pack handlers: raise these, or return ``{"error": {...}}``.

Every exception the runtime raises derives from :class:`CapabilityPackError`. A handler
raises :class:`PackError` (or one of the constructors below) to report a failure whose
code it knows; classification keeps that code through every wrapper. Requests the control
plane refuses before a pack runs raise :class:`RequestRejected` (``UnknownPack``,
``InvalidInput``), whose ``rejection`` is what callers receive.
"""

from control_plane.core.errors import (
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
from control_plane.core.reach import not_permitted

__all__ = [
    "CapabilityPackError",
    "FieldViolation",
    "InvalidInput",
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
