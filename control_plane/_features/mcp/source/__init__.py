"""MCP servers as packs: any MCP server's tools behind a closed vocabulary (docs/mcp.md)."""
