"""MCP servers as tools, and what their tools return."""
