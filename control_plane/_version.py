"""The installed distribution's version: the one source (``importlib.metadata``)."""

from __future__ import annotations

from importlib import metadata

__all__ = ["DISTRIBUTION", "version"]

DISTRIBUTION = "capability-packs"


def version() -> str:
    """``capability-packs``'s version as installed; ``0+unknown`` when running from a
    source tree that was never installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"
