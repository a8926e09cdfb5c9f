"""MCP servers as packs: any MCP server's tools behind a closed vocabulary (docs/mcp.md)."""

from __future__ import annotations

from control_plane._features.mcp.source.config import (
    DEFAULT_FILE,
    ENV_CONFIG,
    McpConfig,
    McpConfigError,
    ServerConfig,
    find_config,
    load_config,
)
from control_plane._features.mcp.source.rules import (
    BUILTIN_CODES,
    BUILTIN_RULES,
    DEFAULT_CODES,
    Rule,
)
from control_plane._features.mcp.source.source import McpSource, pack_name
from control_plane._kernel.reach import Reaches
from control_plane._kernel.registry import Registry

__all__ = [
    "BUILTIN_CODES",
    "BUILTIN_RULES",
    "DEFAULT_CODES",
    "DEFAULT_FILE",
    "ENV_CONFIG",
    "McpConfig",
    "McpConfigError",
    "McpSource",
    "Rule",
    "ServerConfig",
    "find_config",
    "load_config",
    "open_source",
    "pack_name",
]


def open_source(config: McpConfig, registry: Registry, reaches: Reaches | None = None) -> McpSource:
    """Start ``config``'s servers and register their packs into ``registry``, each server
    confined to its packs' grant in ``reaches`` (the runtime's grants; none by default).

    Raises :class:`McpConfigError` when the ``mcp`` SDK is not installed.
    """
    try:
        import mcp.client.session  # noqa: F401
    except ImportError as exc:
        raise McpConfigError(
            f"{config.path}: MCP servers need the MCP SDK ({exc}); "
            "install it with: pip install 'capability-packs[mcp]'"
        ) from None
    source = McpSource(config, reaches)
    source.start(registry)
    return source
