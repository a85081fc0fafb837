"""The API channel: WebSocket, OpenAI-compatible endpoint, web chat and dashboard on one aiohttp server."""
