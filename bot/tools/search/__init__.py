"""Web search: several providers behind one tool, one result format, and a backoff per provider."""
