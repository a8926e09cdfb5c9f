"""``packctl mcp``: capability packs as MCP tools, the closed vocabulary visible to agents
(docs/mcp.md).
"""

from __future__ import annotations

from control_plane.adapters.mcp_bridge.cli import add_cli_commands

__all__ = ["add_cli_commands"]
