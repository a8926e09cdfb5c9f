"""Packs that show the trace they run in (tests/test_tracing.py): loaded with
``--plugin trace_packs``."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from control_plane import Context, Pack, PackError, Reach, hookimpl

OPEN: dict[str, Any] = {"type": "object"}
OUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "traceparent": {"type": ["string", "null"]},
        "error": {
            "type": "object",
            "properties": {"code": {"enum": ["rate_limited", "not_found"]}},
        },
    },
}


async def traced_async(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Return ``ctx.traceparent`` and make a span of its own with the OpenTelemetry API."""
    with trace.get_tracer("trace_packs").start_as_current_span("trace_packs.work"):
        return {"traceparent": ctx.traceparent}


def traced_sync(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Return ``ctx.traceparent`` from a sync handler (a worker thread)."""
    return {"traceparent": ctx.traceparent}


def throttled(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    raise PackError("rate_limited", "slow down", retry_after=1.5)


@hookimpl
def register_packs(register: Any) -> None:
    register(
        Pack(
            "trace.async",
            "3.1.4",
            "Show the trace (async).",
            OPEN,
            OUT,
            traced_async,
            reach=Reach(),
        )
    )
    register(
        Pack("trace.sync", "3.1.4", "Show the trace (sync).", OPEN, OUT, traced_sync, reach=Reach())
    )
    register(
        Pack(
            "trace.throttled", "3.1.4", "Always rate_limited.", OPEN, OUT, throttled, reach=Reach()
        )
    )
