"""Per-chat rules: a channel's settings, overridden by its group's and then its topic's; the most specific wins."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bot.bus import ChatRef
from bot.config.channels.base import ChannelSection, GroupHistoryTrust, GroupPolicy, GroupRules, OnEdit, QueueMode

_OVERRIDES = ("group_policy", "allow_from", "persona", "queue_mode", "group_history", "auto_recall")


@dataclass(frozen=True, slots=True)
class ChatRules:
    """How the bot behaves in one chat; channels without a config section (console, API) get the defaults."""

    group_policy: GroupPolicy = "mention"
    allow_from: frozenset[str] = field(default_factory=frozenset)
    persona: str | None = None
    queue_mode: QueueMode = "collect"
    group_history: int = 20
    group_history_chars: int = 4000
    group_history_trust: GroupHistoryTrust = "lowest"
    on_edit: OnEdit = "note"
    auto_recall: bool | None = None  # None: as the persona and memory.auto_recall say


class ChatRulesBook:
    """Resolves the rules of a chat from `channels.<name>` and its `groups.<id>` and `topics.<thread id>` entries.

    Sections are keyed by channel key: a named account's bot (`telegram@work`) has its own, else its platform's.

    A group entry matches the chat's id (a Telegram chat, a Discord or Slack channel) or its server's (a Discord
    guild); the chat's own entry is more specific than its server's, and a topic's more than its group's.
    """

    def __init__(self, sections: Mapping[str, ChannelSection], queue_mode: QueueMode = "collect") -> None:
        self.reconfigure(sections, queue_mode)

    def reconfigure(self, sections: Mapping[str, ChannelSection], queue_mode: QueueMode = "collect") -> None:
        """Take the rules of a reloaded config; every later lookup sees them."""
        self._sections = dict(sections)
        self._defaults = {name: _channel_rules(section, queue_mode) for name, section in sections.items()}
        self._fallback = ChatRules(queue_mode=queue_mode)

    def for_chat(self, chat: ChatRef, server_id: str | None = None, is_direct: bool = False) -> ChatRules:
        """The rules of `chat`; a direct chat follows its channel's rules only."""
        name = chat.channel_key if chat.channel_key in self._sections else chat.channel  # else as its platform's
        rules = self._defaults.get(name, self._fallback)
        section = self._sections.get(name)
        if section is None or is_direct or not section.groups:
            return rules
        keys = dict.fromkeys((server_id, chat.chat_id))  # a Telegram group is its own server: one layer, not two
        groups = [section.groups[key] for key in keys if key in section.groups]
        layers: list[GroupRules] = list(groups)
        if chat.thread_id:
            layers.extend(group.topics[chat.thread_id] for group in groups if chat.thread_id in group.topics)
        for layer in layers:
            rules = _overridden(rules, layer)
        return rules


def _channel_rules(section: ChannelSection, queue_mode: QueueMode) -> ChatRules:
    return ChatRules(
        group_policy=section.group_policy,
        allow_from=frozenset(section.allow_from),
        queue_mode=section.queue_mode or queue_mode,
        group_history=section.group_history,
        group_history_chars=section.group_history_chars,
        group_history_trust=section.group_history_trust,
        on_edit=section.on_edit,
        auto_recall=section.auto_recall,
    )


def _overridden(rules: ChatRules, layer: GroupRules) -> ChatRules:
    changes: dict[str, Any] = {}
    for name in _OVERRIDES:
        value = getattr(layer, name)
        if value is not None:
            changes[name] = frozenset(value) if name == "allow_from" else value
    return replace(rules, **changes) if changes else rules
