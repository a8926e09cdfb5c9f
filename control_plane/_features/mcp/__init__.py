"""MCP both ways: packs served as MCP tools (bridge), MCP servers as packs (source)
(docs/mcp.md)."""
