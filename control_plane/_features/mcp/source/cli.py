"""The MCP source on the command line: ``--mcp-config`` of every command that builds a
runtime, read back into the runtime's config (docs/mcp.md)."""

from __future__ import annotations

import argparse
from typing import Any

from control_plane._features.mcp.source.config import find_config
from control_plane._kernel.hookspecs import hookimpl

__all__ = ["add_runtime_options", "runtime_config"]


@hookimpl
def add_runtime_options(parser: argparse.ArgumentParser, when: str) -> None:
    """``--mcp-config PATH``: MCP servers whose tools load as packs."""
    parser.add_argument(
        "--mcp-config",
        default=None,
        metavar="PATH",
        help=f"{when}serve the tools of the MCP servers in this file as packs (default: "
        "$PACKCTL_MCP_CONFIG, else ./packctl-mcp.toml when present)",
    )


@hookimpl
def runtime_config(options: argparse.Namespace) -> dict[str, Any]:
    """The MCP config a command's runtime loads: ``--mcp-config``, else
    ``$PACKCTL_MCP_CONFIG``, else ``./packctl-mcp.toml`` when present. Raises
    :class:`~control_plane._features.mcp.source.config.McpConfigError` for a named file
    that is missing."""
    return {"mcp_config": find_config(getattr(options, "mcp_config", None))}
