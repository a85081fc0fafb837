"""`channels.matrix`: the homeserver, the bot's user and how it signs in, and end-to-end encryption."""

from __future__ import annotations

import re

from pydantic import Field, SecretStr, field_validator

from bot.config.channels.base import ChannelSection
from bot.config.durations import Duration


class MatrixConfig(ChannelSection):
    homeserver: str = ""  # https://matrix.example.org
    user_id: str = ""  # @relaybot:example.org
    access_token: SecretStr = SecretStr("")  # or password: relaybot logs in once and keeps the device's token
    password: SecretStr = SecretStr("")
    device_name: str = "relaybot"
    encryption: bool | None = None  # end-to-end encryption; unset: on when the matrix-e2e extra is installed
    sync_timeout: Duration = Field(default=30.0, ge=1, le=120)

    @field_validator("user_id")
    @classmethod
    def _full_user_id(cls, value: str) -> str:
        if value and not re.fullmatch(r"@[^:\s]+:\S+", value):
            raise ValueError(f"{value!r} is not a Matrix user id; write @name:server, e.g. @relaybot:example.org")
        return value
