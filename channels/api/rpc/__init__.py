"""The agent RPC: runs started at once and waited for, over HTTP (with SSE) and over the WebSocket."""
