"""Mattermost: REST API v4 out, its WebSocket events in, buttons and slash commands on the gateway's HTTP server."""
