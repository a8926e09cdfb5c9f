"""The MCP feature on the runtime's hooks: the servers of ``RuntimeConfig.mcp_config``
start with the runtime, their tools loaded as packs (docs/mcp.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from control_plane._features.mcp.source.config import McpConfig, load_config
from control_plane._features.mcp.source.source import McpSource, open_source
from control_plane._kernel.hookspecs import hookimpl

if TYPE_CHECKING:
    from control_plane._kernel.reach import Reaches
    from control_plane._kernel.registry import Registry
    from control_plane._runtime.runtime import RuntimeConfig

__all__ = ["open_pack_sources"]


@hookimpl
def open_pack_sources(config: RuntimeConfig, registry: Registry, reaches: Reaches) -> McpSource:
    """Start the MCP servers of ``config.mcp_config`` (a path or a loaded config), each
    confined to its packs' grant in ``reaches``."""
    given = config.mcp_config
    assert given is not None  # build_runtime asks only with a config
    loaded = given if isinstance(given, McpConfig) else load_config(given)
    return open_source(loaded, registry, reaches)
