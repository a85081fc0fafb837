"""`channels.email`: the IMAP mailbox read and the SMTP server that sends."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, SecretStr, field_validator

from bot.config.channels.base import ChannelSection
from bot.config.durations import Duration
from bot.config.section import Section


class ImapConfig(Section):
    host: str = ""
    port: int = Field(default=993, gt=0, le=65535)
    user: str = ""
    password: SecretStr = SecretStr("")
    folder: str = "INBOX"
    tls: bool = True  # implicit TLS (port 993); off only for a server on this machine
    poll_interval: Duration = Field(default=60.0, gt=0)  # for servers without IDLE


class SmtpConfig(Section):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    host: str = ""
    port: int = Field(default=587, gt=0, le=65535)
    user: str = ""
    password: SecretStr = SecretStr("")
    sender: str = Field(default="", alias="from")
    tls: Literal["starttls", "implicit", "off"] = "starttls"

    @field_validator("sender")
    @classmethod
    def _address(cls, value: str) -> str:
        if value and not re.fullmatch(r"[^@\s<>]+@[^@\s<>]+", value):
            raise ValueError(f"{value!r} is not a bare address; write name@example.org")
        return value


class EmailConfig(ChannelSection):
    imap: ImapConfig = ImapConfig()
    smtp: SmtpConfig = SmtpConfig()
    show_tool_progress: bool = False  # a mail per tool call would flood the inbox

    @field_validator("allow_from", mode="before")
    @classmethod
    def _lower_addresses(cls, value: Any) -> Any:
        """Addresses compare without case, as mail servers treat them."""
        return [str(item).lower() for item in value] if isinstance(value, list) else value
