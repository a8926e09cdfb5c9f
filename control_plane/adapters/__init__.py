"""Thin renderers of outcomes and rejections: packctl, gate, the kit, MCP, Temporal."""
