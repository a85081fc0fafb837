"""The passage index: every message, history entry and fact of a scope, searchable by keyword and vector."""
