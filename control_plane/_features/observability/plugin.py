"""The observability feature on the runtime's hooks: ``Runtime.observe`` attaches metrics,
error events and the incident store (docs/observability.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from control_plane._features.observability.observability import (
    Observability,
    ObservabilityConfig,
    install,
    install_configured,
)
from control_plane._kernel.hookspecs import hookimpl

if TYPE_CHECKING:
    from control_plane._runtime.runtime import Runtime

__all__ = ["observe"]


@hookimpl
def observe(runtime: Runtime, config: object | None, options: dict[str, Any]) -> Observability:
    """With ``config`` (an :class:`ObservabilityConfig`: ``packctl serve``'s options), as
    it says; without, ``options`` go to :func:`install`. Plugin event sinks and the load
    failures are always included."""
    failures = runtime.registry.failures
    if isinstance(config, ObservabilityConfig):
        return install_configured(
            runtime.invoker, config, load_failures=failures, event_sinks=runtime.event_sinks
        )
    sinks = [*runtime.event_sinks, *options.pop("event_sinks", ())]
    return install(runtime.invoker, load_failures=failures, event_sinks=sinks, **options)
