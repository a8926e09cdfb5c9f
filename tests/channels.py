"""Every channel by which text leaves the control plane, and the one function that owns it.

A *channel* is a way a string gets out: to a caller (an outcome, a rejection, a listing), to
an operator (a log line, an event, the incident store), to another system (the MCP and
Temporal bridges). Each has exactly one function through which its outgoing strings pass,
and that function scrubs them (:func:`control_plane._kernel.redact.scrub`). Owners are named
here as ``module:qualname`` strings. It lives with the tests that hold the code to it (the
runtime needs no list of its own channels).

``tests/test_redact_channel_registry.py`` walks the code for channels (log formatters, event
sinks, every string field of every wire message, the bridges' renderers) and fails when one
is not accounted for here, and drives every owner with the secret corpus;
``tests/test_redact_channels.py`` scans every byte a real ``packctl serve`` sends and writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CHANNELS", "WIRE_FIELDS", "Channel"]


@dataclass(frozen=True, slots=True)
class Channel:
    """One channel: its owner function (``module:qualname``) and what travels through it."""

    owner: str
    carries: str


CHANNELS: Mapping[str, Channel] = MappingProxyType(
    {
        "message": Channel(
            "control_plane._kernel.outcome:bounded_text",
            "error messages and violations of outcomes (exception texts, causes, typed and "
            "returned errors, HTTP errors, subprocess errors quoting argv), scrubbed then cut",
        ),
        "partial_result": Channel(
            "control_plane._kernel.outcome:ErrorEnvelope.build",
            "schema_mismatch partial results (scrub_data)",
        ),
        "check": Channel(
            "control_plane._kernel.outcome:CheckRecord.build",
            "validation findings: id, message, expected, actual, location",
        ),
        "validation_message": Channel(
            "control_plane._kernel.schema:_describe",
            "input/output validator messages (they quote the caller's input)",
        ),
        "echo": Channel(
            "control_plane._kernel.limits:clip",
            "pack names and request ids echoed in rejections, scrubbed then cut",
        ),
        "request_id": Channel(
            "control_plane._kernel.outcome:Outcome.build",
            "the caller's request id, echoed in the outcome, status, logs and events",
        ),
        "result_opt_in": Channel(
            "control_plane._kernel.invoke:Invoker._finish",
            "a successful result, scrubbed only for packs with scrub_output=True",
        ),
        "load_failure": Channel(
            "control_plane._kernel.registry:LoadFailure.__post_init__",
            "load-failure plugin, pack and reason (ListPacks, health, CLI, the log line)",
        ),
        "incident": Channel(
            "control_plane._kernel.incidents:Incidents.record",
            "the incident kept under a reference id: summary and traceback, bounded",
        ),
        "incident_store": Channel(
            "control_plane._features.observability.incident_store:_incident_row",
            "incidents at rest (SQLite), scrubbed again",
        ),
        "event_store": Channel(
            "control_plane._features.observability.incident_store:_event_row",
            "error events at rest (SQLite)",
        ),
        "event": Channel(
            "control_plane._features.observability.events:ErrorEvent.to_json",
            "error events to every sink (stream, file, plugins); events not built by the "
            "runtime are scrubbed here",
        ),
        "event_fields": Channel(
            "control_plane._features.observability.events:ErrorEvent.rejection",
            "pack name, request id and message of refused requests, scrubbed then cut",
        ),
        "correlation": Channel(
            "control_plane._features.observability.events:clean_correlation",
            "correlation ids from gRPC metadata, scrubbed then cut",
        ),
        "log": Channel(
            "control_plane._features.grpc.server:_record_fields",
            "capability_packs log lines (JSON and key=value): message and every field",
        ),
        "log_other": Channel(
            "control_plane._features.grpc.server:ScrubbingFormatter.format",
            "other libraries' log lines (grpc, asyncio), tracebacks included",
        ),
        "traceback": Channel(
            "control_plane._features.grpc.server:_scrubbing_excepthook",
            "tracebacks of uncaught exceptions (main thread, other threads) and of exceptions "
            "Python can only report (sys.unraisablehook: a failing __del__, gRPC's Cython "
            "layer); warnings go to the log as py.warnings records",
        ),
        "rejection": Channel(
            "control_plane._kernel.rejection:Rejection.of",
            "refused requests: message, pack, request id and violations, scrubbed then cut",
        ),
        "rejection_wire": Channel(
            "control_plane._features.grpc.status:rejection_status",
            "a rejection on the wire: ErrorInfo metadata (the request id echoed), BadRequest",
        ),
        "child_output": Channel(
            "control_plane._runtime.stderr_relay:StderrRelay._emit",
            "what isolated workers and MCP servers print (stdout and stderr), by lines",
        ),
        "mcp_error": Channel(
            "control_plane._features.mcp.bridge.tools:error_content",
            "an MCP tool call's failure: structured content and text",
        ),
        "mcp_rejection": Channel(
            "control_plane._kernel.rejection:Rejection.of",
            "an MCP tool call refused before the pack ran (rendered from a Rejection)",
        ),
        "temporal_error": Channel(
            "control_plane._features.temporal.bridge:outcome_to_application_error",
            "a failed outcome as a Temporal ApplicationError",
        ),
        "temporal_rejection": Channel(
            "control_plane._kernel.rejection:Rejection.of",
            "a refused request as a Temporal ApplicationError (rendered from a Rejection)",
        ),
        "temporal_domain_error": Channel(
            "control_plane._features.temporal.bridge:envelope_for_domain_error",
            "a domain error raised in workflow code",
        ),
    }
)

#: Every string and bytes field of every wire message a caller receives, and the channel
#: that scrubs it, or why it needs none (``static:``: the control plane's own text or
#: declared data; ``result:``: a pack's successful result, its own data).
WIRE_FIELDS: Mapping[str, str] = MappingProxyType(
    {
        "PackSummary.name": "static: a registered pack name (validated dotted name)",
        "PackSummary.version": "static: a validated semver",
        "PackSummary.summary": "static: the pack's declaration",
        "PackSummary.codes": "static: validated snake_case codes",
        "PackSummary.plugin": "static: the plugin's module name",
        "LoadFailure.plugin": "load_failure",
        "LoadFailure.pack": "load_failure",
        "LoadFailure.reason": "load_failure",
        "DescribePackResponse.name": "static: a registered pack name",
        "DescribePackResponse.version": "static: a validated semver",
        "DescribePackResponse.summary": "static: the pack's declaration",
        "DescribePackResponse.input_schema": "static: the pack's declaration",
        "DescribePackResponse.output_schema": "static: the pack's declaration",
        "DescribePackResponse.docs": "static: the pack's declaration",
        "DescribePackResponse.plugin": "static: the plugin's module name",
        "CodeEntry.code": "static: vocabulary",
        "CodeEntry.title": "static: vocabulary",
        "CodeEntry.description": "static: vocabulary",
        "CodeEntry.recovery_hint": "static: vocabulary",
        "CodeEntry.grpc_status": "static: vocabulary",
        "CodeEntry.absorbs": "static: vocabulary",
        "InvokePackResponse.result": "result: the pack's data (scrub_output=True opts in)",
        "InvokePackResponse.pack": "static: a registered pack name",
        "InvokePackResponse.pack_version": "static: a validated semver",
        "InvokePackResponse.request_id": "request_id",
        "Check.id": "check",
        "Check.message": "check",
        "Check.expected": "check",
        "Check.actual": "check",
        "Check.location": "check",
        "FieldViolation.field": "message",
        "FieldViolation.description": "message",
        "PackError.code": "static: inside the pack's vocabulary",
        "PackError.message": "message",
        "PackError.origin": "static: pack:<name>, control_plane or transport",
        "PackError.partial_result": "partial_result",
        "PackError.detail": "static: INTERNAL_DETAIL",
        "PackError.reference_id": "static: ref_<random hex>",
        "PackError.recovery_hint": "static: vocabulary",
        "PackError.pack": "static: a registered pack name",
        "PackError.pack_version": "static: a validated semver",
        "PackError.request_id": "request_id",
    }
)
