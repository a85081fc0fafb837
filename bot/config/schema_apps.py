"""`channels`: every platform's section, with those of the apps reached by webhook or mail server (WhatsApp, email)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, SecretStr, field_validator, model_validator

from bot.bus.messages import channel_key
from bot.config.durations import Duration
from bot.config.schema_channels import (
    ApiConfig,
    ChannelSection,
    DiscordConfig,
    MatrixConfig,
    SlackConfig,
    TelegramConfig,
    account_problem,
)
from bot.config.schema_selfhosted import MattermostConfig
from bot.config.section import Section
from bot.errors import ConfigError


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
    matrix: MatrixConfig = MatrixConfig()
    whatsapp: WhatsAppConfig = WhatsAppConfig()
    email: EmailConfig = EmailConfig()
    mattermost: MattermostConfig = MattermostConfig()
    api: ApiConfig = ApiConfig()

    def chat_sections(self) -> dict[str, ChannelSection]:
        """The chat platforms' sections by channel name (the API channel has no groups or access policy)."""
        return {
            "telegram": self.telegram,
            "discord": self.discord,
            "slack": self.slack,
            "matrix": self.matrix,
            "whatsapp": self.whatsapp,
            "email": self.email,
            "mattermost": self.mattermost,
        }

    def bot_sections(self) -> dict[str, ChannelSection]:
        """Every bot's settings by channel key (`telegram`, `telegram@work`): each account over its platform's."""
        return {
            channel_key(platform, account): bot
            for platform, section in self.chat_sections().items()
            for account, bot in section.bots().items()
        }

    @model_validator(mode="after")
    def _accounts_apart(self) -> ChannelsConfig:
        """Each platform's accounts have their own names and non-empty credentials."""
        for platform, section in self.chat_sections().items():
            if problem := account_problem(platform, section.account_entries()):
                key, message = problem
                raise ConfigError(message, key)
        return self

    def group_personas(self) -> list[tuple[str, str]]:
        """Every persona a group or topic rule names (an account's own groups too), with the key that names it."""
        named: list[tuple[str, str]] = []
        for channel, section in self.chat_sections().items():
            places = [(f"channels.{channel}", section.groups)]
            accounts = enumerate(section.account_entries())
            places += [(f"channels.{channel}.accounts[{i}]", account.groups or {}) for i, account in accounts]
            for prefix, groups in places:
                for group_id, group in groups.items():
                    where = f"{prefix}.groups.{group_id}"
                    if group.persona:
                        named.append((f"{where}.persona", group.persona))
                    named.extend(
                        (f"{where}.topics.{topic_id}.persona", topic.persona)
                        for topic_id, topic in group.topics.items()
                        if topic.persona
                    )
        return named
