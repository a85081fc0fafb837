"""What every chat platform's section shares: access policy, group rules, streaming, and further bots as accounts."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, SecretStr, field_validator

from bot.bus.messages import ACCOUNT_NAME
from bot.config.durations import Duration
from bot.config.section import Section

DmPolicy = Literal["pairing", "allowlist", "open"]
GroupPolicy = Literal["mention", "open", "off"]
QueueMode = Literal["collect", "followup", "steer"]
GroupHistoryTrust = Literal["lowest", "mentioner"]
OnEdit = Literal["ignore", "note", "rerun"]


def _as_strings(value: Any) -> Any:
    """Ids written as YAML numbers (Telegram, Discord) read as the strings the platforms send."""
    return [str(item) for item in value] if isinstance(value, list) else value


class GroupRules(Section):
    """What one group or topic overrides; an unset key keeps the wider rule."""

    group_policy: GroupPolicy | None = None
    allow_from: list[str] | None = None
    persona: str | None = None
    queue_mode: QueueMode | None = None
    group_history: int | None = Field(default=None, ge=0)
    auto_recall: bool | None = None

    @field_validator("allow_from", mode="before")
    @classmethod
    def _ids_as_strings(cls, value: Any) -> Any:
        return _as_strings(value)


class GroupSection(GroupRules):
    """A group's rules (a Telegram chat, a Discord guild or channel, a Slack channel) and its topics' own."""

    topics: dict[str, GroupRules] = {}

    @field_validator("topics", mode="before")
    @classmethod
    def _keys_as_strings(cls, value: Any) -> Any:
        return {str(k): v for k, v in value.items()} if isinstance(value, dict) else value


class ChannelSection(Section):
    enabled: bool = False
    allow_from: list[str] = []
    dm_policy: DmPolicy = "pairing"
    group_policy: GroupPolicy = "mention"
    groups: dict[str, GroupSection] = {}
    queue_mode: QueueMode | None = None
    auto_recall: bool | None = None  # None: memory.auto_recall.enabled
    group_history: int = Field(default=20, ge=0)
    group_history_chars: int = Field(default=4000, gt=0)
    group_history_trust: GroupHistoryTrust = "lowest"
    on_edit: OnEdit = "note"
    send_concurrency: int = Field(default=8, gt=0)
    streaming: Literal["auto", "edit", "off"] = "auto"
    stream_interval: Duration = Field(default=1.0, gt=0)
    show_tool_progress: bool = True
    show_reasoning: bool = False
    reactions: Literal["off", "ack", "status"] | None = None  # None: ack in groups, off in direct chats

    @field_validator("allow_from", mode="before")
    @classmethod
    def _ids_as_strings(cls, value: Any) -> Any:
        return _as_strings(value)

    @field_validator("groups", mode="before")
    @classmethod
    def _keys_as_strings(cls, value: Any) -> Any:
        return {str(k): v for k, v in value.items()} if isinstance(value, dict) else value

    def has_own_bot(self) -> bool:
        """Whether the section's own credentials are set (the default bot); each platform says which keys."""
        return True

    def account_entries(self) -> list[AccountOverrides]:
        """The platform's further bots (`accounts`); a platform without that key has none."""
        return []

    def bots(self) -> dict[str | None, Self]:
        """Every bot of this platform by account name, None first for the default one (the section's own
        credentials, kept whenever set or when no account is listed), each with the account's settings laid over
        the section's."""
        found: dict[str | None, Self] = {}
        if self.has_own_bot() or not self.account_entries():
            found[None] = self
        for account in self.account_entries():
            found[account.name] = self.model_copy(update={**account.overrides(), "accounts": []})
        return found


SHARED_KEYS = frozenset({"name"})
"""Keys of an account entry that name it rather than override the platform section."""


class AccountOverrides(Section):
    """One more bot: its name, and the platform settings it sets for itself; unset keys keep the section's."""

    name: str = Field(pattern=f"^{ACCOUNT_NAME.pattern}$")
    allow_from: list[str] | None = None
    dm_policy: DmPolicy | None = None
    group_policy: GroupPolicy | None = None
    groups: dict[str, GroupSection] | None = None
    queue_mode: QueueMode | None = None
    send_concurrency: int | None = Field(default=None, gt=0)
    streaming: Literal["auto", "edit", "off"] | None = None
    reactions: Literal["off", "ack", "status"] | None = None
    show_tool_progress: bool | None = None
    show_reasoning: bool | None = None

    @field_validator("allow_from", mode="before")
    @classmethod
    def _ids_as_strings(cls, value: Any) -> Any:
        return _as_strings(value)

    @field_validator("groups", mode="before")
    @classmethod
    def _keys_as_strings(cls, value: Any) -> Any:
        return {str(k): v for k, v in value.items()} if isinstance(value, dict) else value

    def overrides(self) -> dict[str, Any]:
        """The settings this account sets, by key, to lay over its platform's section."""
        set_here = self.model_fields_set - SHARED_KEYS
        return {key: getattr(self, key) for key in set_here if getattr(self, key) is not None}


CREDENTIAL_KEYS = ("token", "bot_token", "app_token")
"""The keys that hold a bot's credentials: changing one needs a restart."""


def account_problem(platform: str, accounts: list[AccountOverrides]) -> tuple[str, str] | None:
    """The first problem with a platform's accounts as (key, message): a name used twice or an empty token."""
    seen: dict[str, int] = {}
    for index, account in enumerate(accounts):
        where = f"channels.{platform}.accounts[{index}]"
        if account.name in seen:
            return f"{where}.name", f"account {account.name!r} is already accounts[{seen[account.name]}]; names differ"
        seen[account.name] = index
        for key in CREDENTIAL_KEYS:
            value = getattr(account, key, None)
            if isinstance(value, SecretStr) and not value.get_secret_value().strip():
                return f"{where}.{key}", f"account {account.name!r} has an empty {key}"
    return None
