"""One OpenTelemetry span per ``ControlPlaneService`` call (a server interceptor);
docs/observability.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import grpc

from control_plane._features.grpc.status import parse_status
from control_plane._kernel.limits import MAX_PACK_NAME, MAX_REQUEST_ID, clip
from control_plane._kernel.pack import reset_traceparent, set_traceparent

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from control_plane._features.observability.tracing import Tracing

__all__ = ["SERVER_ERROR_STATUSES", "TracingInterceptor"]

_SERVICE = "control_plane.v1.ControlPlaneService"
_PREFIX = f"/{_SERVICE}/"
#: Statuses that mark a server span as an error (OpenTelemetry RPC conventions).
SERVER_ERROR_STATUSES = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)
_CODE_BY_VALUE: Mapping[int, grpc.StatusCode] = {s.value[0]: s for s in grpc.StatusCode}


def _status(code: Any) -> grpc.StatusCode:
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(code, int):
        return _CODE_BY_VALUE.get(code, grpc.StatusCode.UNKNOWN)
    return grpc.StatusCode.UNKNOWN


class TracingInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc,unused-ignore]
    """Server interceptor: a span around each unary ``ControlPlaneService`` call.

    Put it first among the interceptors, so refused calls (unauthenticated) get a span.
    """

    def __init__(self, tracing: Tracing) -> None:
        from opentelemetry import trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self._trace = trace
        self.tracer = tracing.tracer
        self._propagator = TraceContextTextMapPropagator()

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = await continuation(details)
        method: str = details.method
        if handler is None or handler.unary_unary is None or not method.startswith(_PREFIX):
            return handler
        inner = handler.unary_unary
        name = method[1:]
        rpc_method = method[len(_PREFIX) :]

        async def traced(request: Any, context: Any) -> Any:
            return await self._call(inner, name, rpc_method, request, context)

        return grpc.unary_unary_rpc_method_handler(
            traced,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    async def _call(
        self,
        inner: Callable[[Any, Any], Awaitable[Any]],
        name: str,
        rpc_method: str,
        request: Any,
        context: Any,
    ) -> Any:
        carrier: dict[str, str] = {}
        for key, value in context.invocation_metadata() or ():
            if key in ("traceparent", "tracestate") and isinstance(value, str):
                carrier[key] = value
        parent = self._propagator.extract(carrier) if carrier else None
        span = self.tracer.start_span(
            name,
            context=parent,
            kind=self._trace.SpanKind.SERVER,
            attributes={
                "rpc.system": "grpc",
                "rpc.service": _SERVICE,
                "rpc.method": rpc_method,
            },
        )
        pack = getattr(request, "pack", None) or getattr(request, "name", None)
        if pack:
            span.set_attribute("capability_packs.pack.name", clip(str(pack), MAX_PACK_NAME))
        request_id = getattr(request, "request_id", "")
        if request_id:
            span.set_attribute("capability_packs.request_id", clip(request_id, MAX_REQUEST_ID))
        out: dict[str, str] = {}
        self._propagator.inject(out, context=self._trace.set_span_in_context(span))
        token = set_traceparent(out.get("traceparent"))
        try:
            with self._trace.use_span(span, end_on_exit=False, record_exception=False):
                response = await inner(request, context)
        except BaseException:
            self._finish_failed(span, context)
            raise
        finally:
            reset_traceparent(token)
        version = getattr(response, "pack_version", "") or getattr(response, "version", "")
        if version:
            span.set_attribute("capability_packs.pack.version", version)
        span.set_attribute("rpc.grpc.status_code", 0)
        span.end()
        return response

    def _finish_failed(self, span: Span, context: Any) -> None:
        """Attributes of a call that ended with a non-OK status (abort or exception)."""
        code = context.code()
        status = _status(code) if code is not None else grpc.StatusCode.UNKNOWN
        span.set_attribute("rpc.grpc.status_code", status.value[0])
        info = parse_status(status, None, context.trailing_metadata()).error_info
        if info is not None:
            metadata = info.metadata
            span.set_attribute("error.type", metadata.get("code") or info.reason.lower())
            if "retryable" in metadata:
                span.set_attribute("capability_packs.retryable", metadata["retryable"] == "true")
            if metadata.get("pack_version"):
                span.set_attribute("capability_packs.pack.version", metadata["pack_version"])
        else:
            span.set_attribute("error.type", status.name)
        if status in SERVER_ERROR_STATUSES:
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, status.name))
        span.end()
