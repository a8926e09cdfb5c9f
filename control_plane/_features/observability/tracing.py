"""Opt-in OpenTelemetry tracing (extra ``otel``): the OTLP exporter and the tracer for the wire
layer.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias
from urllib.parse import urlsplit

from control_plane._kernel.limits import ConfigError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

logger = logging.getLogger("capability_packs.tracing")

__all__ = [
    "DEFAULT_SERVICE_NAME",
    "INSTRUMENTATION_NAME",
    "PROTOCOLS",
    "SHUTDOWN_TIMEOUT",
    "Protocol",
    "Tracing",
]

Protocol: TypeAlias = Literal["http/protobuf", "grpc"]
PROTOCOLS: tuple[Protocol, ...] = ("http/protobuf", "grpc")
#: ``service.name`` of the spans (``OTEL_SERVICE_NAME`` overrides it).
DEFAULT_SERVICE_NAME = "capability-packs"
#: Seconds ``Tracing.close()`` waits for the last spans to be exported.
SHUTDOWN_TIMEOUT = 5.0
#: Name of the tracer (the instrumentation scope of every span we make).
INSTRUMENTATION_NAME = "capability_packs"
_MISSING = (
    "tracing needs the otel extra: pip install 'capability-packs[otel]' "
    "(opentelemetry-sdk and the OTLP exporters)"
)


@dataclass(frozen=True, slots=True)
class _Endpoint:
    url: str
    insecure: bool


def _endpoint(url: str, protocol: Protocol) -> _Endpoint:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--otel-endpoint {url!r}: expected http://HOST:PORT or https://...")
    if protocol == "grpc":
        return _Endpoint(url, insecure=parts.scheme == "http")
    # OTLP/HTTP: a base URL gets the signal path, as OTEL_EXPORTER_OTLP_ENDPOINT does.
    path = parts.path.rstrip("/")
    if not path.endswith("/v1/traces"):
        url = url.rstrip("/") + "/v1/traces"
    return _Endpoint(url, insecure=parts.scheme == "http")


class Tracing:
    """A tracer provider exporting spans over OTLP, and the tracer the server uses."""

    def __init__(self, provider: TracerProvider, *, endpoint: str, protocol: Protocol) -> None:
        self.provider = provider
        self.endpoint = endpoint
        self.protocol = protocol
        self.tracer: Tracer = provider.get_tracer(INSTRUMENTATION_NAME)
        self._closed = False

    @classmethod
    def to_endpoint(
        cls,
        url: str,
        protocol: Protocol = "http/protobuf",
        *,
        set_global: bool = False,
        service_name: str = DEFAULT_SERVICE_NAME,
    ) -> Tracing:
        """Export to the OTLP receiver at ``url`` (batched; ``close()`` flushes).

        ``set_global`` also makes it OpenTelemetry's global tracer provider, so spans a
        pack makes with the OpenTelemetry API nest under the control plane's span
        (``packctl serve`` does this).
        """
        if protocol not in PROTOCOLS:
            raise ConfigError(f"--otel-protocol must be one of {', '.join(PROTOCOLS)}")
        endpoint = _endpoint(url, protocol)
        try:
            from opentelemetry import trace
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError as exc:
            raise ConfigError(_MISSING) from exc
        exporter: Any
        if protocol == "grpc":
            try:
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                    OTLPSpanExporter as GrpcExporter,
                )
            except ImportError as exc:
                raise ConfigError(_MISSING) from exc
            exporter = GrpcExporter(endpoint=endpoint.url, insecure=endpoint.insecure)
        else:
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                    OTLPSpanExporter as HttpExporter,
                )
            except ImportError as exc:
                raise ConfigError(_MISSING) from exc
            exporter = HttpExporter(endpoint=endpoint.url)
        # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES win over our default name.
        named = "OTEL_SERVICE_NAME" in os.environ or "service.name=" in os.environ.get(
            "OTEL_RESOURCE_ATTRIBUTES", ""
        )
        attributes = {} if named else {"service.name": service_name}
        provider = TracerProvider(resource=Resource.create(attributes))
        provider.add_span_processor(BatchSpanProcessor(exporter))
        if set_global:
            trace.set_tracer_provider(provider)
        return cls(provider, endpoint=endpoint.url, protocol=protocol)

    def close(self, timeout: float = SHUTDOWN_TIMEOUT) -> bool:
        """Export what is buffered and stop, waiting at most ``timeout`` seconds.

        The SDK's shutdown waits up to 30 s for its batch thread, which keeps exporting
        while the receiver refuses or never answers (each request retried or timed out):
        a stopping server would wait on an unreachable collector. The shutdown runs in a
        daemon thread here; past ``timeout`` the spans still queued are dropped (said on
        stderr) and ``False`` is returned.
        """
        if self._closed:
            return True
        self._closed = True
        done = threading.Thread(target=self.provider.shutdown, name="otel-shutdown", daemon=True)
        done.start()
        done.join(timeout)
        if not done.is_alive():
            return True
        logger.warning(
            "packctl: tracing: the OTLP receiver %s did not take the last spans within %gs; "
            "they were dropped",
            self.endpoint,
            timeout,
        )
        return False
