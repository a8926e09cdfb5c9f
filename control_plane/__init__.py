"""capability-packs: a control plane that keeps every pack's errors inside a closed vocabulary.

This module is the pack-author API, and nothing else::

    from control_plane import Pack, CodeDoc, Check, Result, Context, PackError, hookimpl
    from control_plane import errors   # errors.not_found(), errors.rate_limited(30), ...

    @hookimpl
    def register_packs(register):
        register(Pack(name="team.tool", version="1.0.0", summary="...", input_schema={...},
                      output_schema={...}, handler=run, codes={"my_code": CodeDoc(...)}))

The other public modules (docs/architecture.md): :mod:`control_plane.errors` (typed pack
errors), :mod:`control_plane.tools` (subprocess helper, stderr tables, scrubbing, HTTP
``Retry-After`` parsing for pack authors) and :mod:`control_plane.embed` (running and
serving packs from your own program: the runtime, the server, the clients). Everything
under ``core``, ``runtime``, ``wire`` and ``adapters`` is internal.
"""

from control_plane import errors
from control_plane._version import version as _installed_version
from control_plane.core.hookspecs import hookimpl
from control_plane.core.pack import (
    Check,
    CodeDoc,
    Context,
    Pack,
    Reach,
    Result,
    Severity,
    error_schema,
)
from control_plane.core.reach import PackReach
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
