"""The `channels.irc` section: one IRC network, the bot's nick and account, and the channels it sits in."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator

from bot.config.channels.base import ChannelSection


class IrcConfig(ChannelSection):
    server: str = ""
    port: int = Field(default=6697, gt=0, le=65535)
    tls: bool = True
    nick: str = "relaybot"
    username: str = ""  # the services account; empty: the nick
    password: SecretStr = SecretStr("")  # the account's password, for SASL PLAIN or NickServ
    sasl: bool = True  # SASL PLAIN when the server offers it; else (or when off) NickServ IDENTIFY after connecting
    channels: list[str] = []

    @field_validator("channels")
    @classmethod
    def _channel_names(cls, value: list[str]) -> list[str]:
        bad = [name for name in value if not name or name[0] not in "#&+!" or " " in name or "," in name]
        if bad:
            raise ValueError(f"not channel names (start with #, no spaces or commas): {', '.join(bad)}")
        return value

    def has_own_bot(self) -> bool:
        return bool(self.server)
