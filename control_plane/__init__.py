"""capability-packs: a control plane that keeps every pack's errors inside a closed vocabulary.

The pack-author API (``Pack``, ``CodeDoc``, ``Result``, ``Context``, ``PackError``, ``hookimpl``);
the other public modules are listed in docs/architecture.md.
"""

from control_plane import errors
from control_plane._kernel.hookspecs import hookimpl
from control_plane._kernel.pack import (
    Check,
    CodeDoc,
    Context,
    Pack,
    Reach,
    Result,
    Severity,
    error_schema,
)
from control_plane._kernel.reach import PackReach
from control_plane._version import version as _installed_version
from control_plane.errors import (
    CapabilityPackError,
    FieldViolation,
    PackError,
    artifact_failed,
    auth_failed,
    network_error,
    not_found,
    rate_limited,
    schema_mismatch,
    timeout,
)

__version__ = _installed_version()

__all__ = [
    "CapabilityPackError",
    "Check",
    "CodeDoc",
    "Context",
    "FieldViolation",
    "Pack",
    "PackError",
    "PackReach",
    "Reach",
    "Result",
    "Severity",
    "__version__",
    "artifact_failed",
    "auth_failed",
    "error_schema",
    "errors",
    "hookimpl",
    "network_error",
    "not_found",
    "rate_limited",
    "schema_mismatch",
    "timeout",
]
