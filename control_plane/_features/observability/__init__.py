"""Observability: metrics, error events, incidents, tracing (docs/observability.md)."""
