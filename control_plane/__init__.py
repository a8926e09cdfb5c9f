"""capability-packs: a control plane that keeps every pack's errors inside a closed vocabulary.

The public surface for pack authors and embedders is re-exported here; everything else is
internal. A pack author needs::

    from control_plane import Pack, CodeDoc, Check, Result, PackError, hookimpl

    @hookimpl
    def register_packs(register):
        register(Pack(name="team.tool", version="1.0.0", summary="...", input_schema={...},
                      output_schema={...}, handler=run, codes={"my_code": CodeDoc(...)}))
"""

from control_plane.core.classify import Classification, classify, parse_retry_after
from control_plane.core.enforce import nearest_code
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
from control_plane.core.hookspecs import hookimpl
from control_plane.core.invoke import Invoker
from control_plane.core.outcome import CheckRecord, ErrorEnvelope, Outcome, ValidationRecord
from control_plane.core.pack import Check, CodeDoc, Context, Pack, Result
from control_plane.core.redact import Incidents, scrub
from control_plane.core.registry import LoadedPack, LoadFailure, Registry
from control_plane.core.vocabulary import BASELINE, CodeInfo
from control_plane.runtime.plugins import DEFAULT_PLUGINS, load_registry

__version__ = "0.1.0"

__all__ = [
    "BASELINE",
    "DEFAULT_PLUGINS",
    "CapabilityPackError",
    "Check",
    "CheckRecord",
    "Classification",
    "CodeDoc",
    "CodeInfo",
    "Context",
    "ErrorEnvelope",
    "FieldViolation",
    "Incidents",
    "InvalidInput",
    "Invoker",
    "LoadFailure",
    "LoadedPack",
    "Outcome",
    "Pack",
    "PackError",
    "PluginLoadError",
    "Registry",
    "RequestRejected",
    "Result",
    "UnknownPack",
    "ValidationRecord",
    "__version__",
    "artifact_failed",
    "auth_failed",
    "classify",
    "hookimpl",
    "load_registry",
    "nearest_code",
    "network_error",
    "not_found",
    "parse_retry_after",
    "rate_limited",
    "schema_mismatch",
    "scrub",
    "timeout",
]
