"""`channels.signal`: the signal-cli daemon the user runs, the account it serves, and the name the bot answers to."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bot.config.channels.base import ChannelSection


class SignalConfig(ChannelSection):
    url: str = Field(default="http://127.0.0.1:8080", pattern=r"^https?://[^\s]+$")  # signal-cli daemon --http
    account: str = Field(default="", pattern=r"^(\+[1-9]\d{6,14})?$")  # the bot's number, as +<country><number>
    name: str = ""  # in groups, a message naming the bot (as a word) counts as a mention, as an @mention does
    streaming: Literal["auto", "edit", "off"] = "off"  # Signal marks edits and caps them: replies go out whole
