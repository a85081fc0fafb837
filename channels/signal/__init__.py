"""Signal through a signal-cli daemon the user runs: its JSON-RPC over HTTP out, its server-sent events in."""
