"""The `channels.xmpp` section: the bot's account (JID and password), where to connect, and the rooms it joins."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from bot.config.channels.base import ChannelSection


class XmppConfig(ChannelSection):
    jid: str = ""
    password: SecretStr = SecretStr("")
    host: str = ""  # empty: the JID's domain (its SRV records)
    port: int = Field(default=5222, gt=0, le=65535)
    tls: Literal["starttls", "direct", "off"] = "starttls"  # off only for a server on this machine
    rooms: list[str] = []  # MUC rooms (room@conference.example.org) joined on connect and after each reconnect
    nick: str = ""  # the bot's nick in rooms; empty: the JID's local part

    @field_validator("jid")
    @classmethod
    def _bare_jid(cls, value: str) -> str:
        if value and ("@" not in value or value.startswith("@")):
            raise ValueError("a JID such as bot@example.org")
        return value

    def has_own_bot(self) -> bool:
        return bool(self.jid)
