"""`channels.mattermost`: the server, the bot account's token, and where the server calls the gateway back."""

from __future__ import annotations

from pydantic import Field, SecretStr

from bot.config.channels.base import ChannelSection


class MattermostConfig(ChannelSection):
    url: str = Field(default="", pattern=r"^(https?://[^\s]+)?$")  # the server, e.g. https://chat.example.org
    token: SecretStr = SecretStr("")  # the bot account's access token
    reply_in_thread: bool = True  # a mention in a channel is answered in a thread under it, its own session
    callback_url: str = Field(default="", pattern=r"^(https?://[^\s]+)?$")
    """How the Mattermost server reaches the gateway's HTTP server, for buttons and slash commands; empty: neither."""
