"""Hook points: their typed events and decisions, and the handlers that run at each (plugins and built-ins)."""
