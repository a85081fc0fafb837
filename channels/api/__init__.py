"""The API channel: WebSocket, OpenAI-compatible endpoint, web chat and dashboard on one aiohttp server."""

from channels.api.channel import ApiChannel

__all__ = ["ApiChannel"]
