"""`channels.whatsapp`: the Cloud API number, token and webhook secrets, and the template past 24 hours."""

from __future__ import annotations

from pydantic import Field, SecretStr

from bot.config.channels.base import ChannelSection
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
