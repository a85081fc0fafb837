"""`channels`: one field per platform, each with its section's own module here, plus the API channel."""

from __future__ import annotations

from pydantic import model_validator

from bot.bus.messages import channel_key
from bot.config.channels.api import ApiConfig
from bot.config.channels.base import ChannelSection, account_problem
from bot.config.channels.discord import DiscordConfig
from bot.config.channels.email import EmailConfig
from bot.config.channels.irc import IrcConfig
from bot.config.channels.matrix import MatrixConfig
from bot.config.channels.mattermost import MattermostConfig
from bot.config.channels.signal import SignalConfig
from bot.config.channels.slack import SlackConfig
from bot.config.channels.teams import TeamsConfig
from bot.config.channels.telegram import TelegramConfig
from bot.config.channels.whatsapp import WhatsAppConfig
from bot.config.channels.xmpp import XmppConfig
from bot.config.section import Section
from bot.errors import ConfigError


class ChannelsConfig(Section):
    telegram: TelegramConfig = TelegramConfig()
    discord: DiscordConfig = DiscordConfig()
    slack: SlackConfig = SlackConfig()
    matrix: MatrixConfig = MatrixConfig()
    whatsapp: WhatsAppConfig = WhatsAppConfig()
    email: EmailConfig = EmailConfig()
    mattermost: MattermostConfig = MattermostConfig()
    signal: SignalConfig = SignalConfig()
    irc: IrcConfig = IrcConfig()
    xmpp: XmppConfig = XmppConfig()
    teams: TeamsConfig = TeamsConfig()
    api: ApiConfig = ApiConfig()

    def chat_sections(self) -> dict[str, ChannelSection]:
        """The chat platforms' sections by channel name (the API channel has no groups or access policy)."""
        sections = {name: getattr(self, name) for name in type(self).model_fields}
        return {name: section for name, section in sections.items() if isinstance(section, ChannelSection)}

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
