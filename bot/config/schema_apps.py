"""`channels`: every platform's section, with those of the apps reached by webhook or mail server (WhatsApp, email)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, SecretStr, field_validator

from bot.config.durations import Duration
from bot.config.schema_channels import ApiConfig, ChannelSection, DiscordConfig, SlackConfig, TelegramConfig
from bot.config.section import Section


class WhatsAppTemplate(Section):
    """A pre-approved message template, sent when a reply falls outside the 24-hour window."""

    name: str = Field(min_length=1)
    language: str = "en_US"


class WhatsAppConfig(ChannelSection):
    phone_number_id: str = ""
    access_token: SecretStr = SecretStr("")
    app_secret: SecretStr = SecretStr("")
    verify_token: SecretStr = SecretStr("")
    webhook_path: str = Field(default="/whatsapp/webhook", pattern=r"^/[\w./-]*$")
    api_base: str = "https://graph.facebook.com/v21.0"
    template: WhatsAppTemplate | None = None


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


class ChannelsConfig(Section):
    telegram: TelegramConfig = TelegramConfig()
    discord: DiscordConfig = DiscordConfig()
    slack: SlackConfig = SlackConfig()
    whatsapp: WhatsAppConfig = WhatsAppConfig()
    email: EmailConfig = EmailConfig()
    api: ApiConfig = ApiConfig()

    def chat_sections(self) -> dict[str, ChannelSection]:
        """The chat platforms' sections by channel name (the API channel has no groups or access policy)."""
        return {
            "telegram": self.telegram,
            "discord": self.discord,
            "slack": self.slack,
            "whatsapp": self.whatsapp,
            "email": self.email,
        }

    def group_personas(self) -> list[tuple[str, str]]:
        """Every persona a group or topic rule names, with the key that names it."""
        named: list[tuple[str, str]] = []
        for channel, section in self.chat_sections().items():
            for group_id, group in section.groups.items():
                where = f"channels.{channel}.groups.{group_id}"
                if group.persona:
                    named.append((f"{where}.persona", group.persona))
                named.extend(
                    (f"{where}.topics.{topic_id}.persona", topic.persona)
                    for topic_id, topic in group.topics.items()
                    if topic.persona
                )
        return named
