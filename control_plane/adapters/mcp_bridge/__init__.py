"""Capability packs as MCP tools, with the closed error vocabulary visible to agents.

``packctl mcp [--target HOST:PORT | --local] [--http HOST:PORT]`` (see
:mod:`control_plane.adapters.mcp_bridge.cli` and ``docs/mcp.md``). The package is named
``mcp_bridge`` so it never shadows the ``mcp`` SDK it is built on; it needs the ``mcp``
extra (``pip install 'capability-packs[mcp]'``).

* :mod:`~control_plane.adapters.mcp_bridge.tools` -- names, schemas, descriptions, call results;
* :mod:`~control_plane.adapters.mcp_bridge.backends` -- in-process packs or a gRPC control plane;
* :mod:`~control_plane.adapters.mcp_bridge.server` -- the SDK server, stdio and streamable HTTP.
"""

from __future__ import annotations

from control_plane.adapters.mcp_bridge.cli import add_cli_commands

__all__ = ["add_cli_commands"]
