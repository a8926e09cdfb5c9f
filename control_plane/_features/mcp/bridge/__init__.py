"""``packctl mcp``: capability packs as MCP tools, the closed vocabulary visible to agents
(docs/mcp.md).
"""
