"""`channels.telegram`: the Bot API's token and endpoint, and further bots as accounts."""

from __future__ import annotations

from pydantic import Field, SecretStr

from bot.config.channels.base import AccountOverrides, ChannelSection
from bot.config.durations import Duration


class TelegramAccount(AccountOverrides):
    token: SecretStr
    api_base: str | None = None
    poll_timeout: Duration | None = Field(default=None, ge=1, le=50)


class TelegramConfig(ChannelSection):
    token: SecretStr = SecretStr("")
    api_base: str = "https://api.telegram.org/bot"
    poll_timeout: Duration = Field(default=10.0, ge=1, le=50)
    accounts: list[TelegramAccount] = []

    def account_entries(self) -> list[AccountOverrides]:
        return list(self.accounts)

    def has_own_bot(self) -> bool:
        return bool(self.token.get_secret_value())
