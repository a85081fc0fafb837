"""`channels.discord`: the bot token, the REST and gateway endpoints, and further bots as accounts."""

from __future__ import annotations

from pydantic import SecretStr

from bot.config.channels.base import AccountOverrides, ChannelSection


class DiscordAccount(AccountOverrides):
    """A Discord bot; `api_base` and `gateway_url` stay the section's: discord.py holds them once per process."""

    token: SecretStr
    command_guilds: list[int] | None = None


class DiscordConfig(ChannelSection):
    token: SecretStr = SecretStr("")
    api_base: str = "https://discord.com/api/v10"
    gateway_url: str = "wss://gateway.discord.gg"
    command_guilds: list[int] = []
    accounts: list[DiscordAccount] = []

    def account_entries(self) -> list[AccountOverrides]:
        return list(self.accounts)

    def has_own_bot(self) -> bool:
        return bool(self.token.get_secret_value())
