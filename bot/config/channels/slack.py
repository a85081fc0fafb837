"""`channels.slack`: the bot and Socket Mode tokens, threading, and further apps as accounts."""

from __future__ import annotations

from pydantic import SecretStr

from bot.config.channels.base import AccountOverrides, ChannelSection


class SlackAccount(AccountOverrides):
    bot_token: SecretStr
    app_token: SecretStr
    api_base: str | None = None
    reply_in_thread: bool | None = None


class SlackConfig(ChannelSection):
    bot_token: SecretStr = SecretStr("")
    app_token: SecretStr = SecretStr("")
    api_base: str = "https://slack.com/api/"
    reply_in_thread: bool = True
    accounts: list[SlackAccount] = []

    def account_entries(self) -> list[AccountOverrides]:
        return list(self.accounts)

    def has_own_bot(self) -> bool:
        return bool(self.bot_token.get_secret_value())
