"""A model per chat: the models `llm.models` offers, and which one each chat chose with `/model`."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import SecretStr

from bot.bus import ChatRef
from bot.chats.settings import ChatSettingsStore
from bot.config.schema import LLMConfig, ModelChoiceConfig
from bot.llm.keys import inherited_key

logger = logging.getLogger(__name__)

DEFAULT = "default"
"""Stored for a thread that went back to the default model while its chat chose another."""


def chosen_llm(base: LLMConfig, choice: ModelChoiceConfig) -> LLMConfig:
    """`base` (the persona's or the config's model settings) speaking with the chosen model instead."""
    changes: dict[str, object] = {"model": choice.name, "context_window": None}
    if choice.api_base is not None:
        changes["api_base"] = choice.api_base
    own_key = choice.api_key.get_secret_value() if choice.api_key is not None else ""
    changes["api_key"] = SecretStr(
        inherited_key(own_key, choice.api_base, base.api_key.get_secret_value(), base.api_base)
    )
    return base.model_copy(update=changes)


class ChatModels:
    """The offered models by alias, and each chat's choice kept in the chat settings (shared by every process)."""

    def __init__(self, offered: Sequence[ModelChoiceConfig], settings: ChatSettingsStore) -> None:
        self.reconfigure(offered)
        self._settings = settings

    def reconfigure(self, offered: Sequence[ModelChoiceConfig]) -> None:
        """Offer the models of a reloaded config; a chat whose alias left keeps the default until it chooses."""
        self.offered = {choice.alias: choice for choice in offered}

    def chosen(self, session_key: str) -> ModelChoiceConfig | None:
        """The chat's chosen model, else its group's (a thread follows its channel); None for the default."""
        if not self.offered:
            return None
        alias = self._settings.get(session_key).model
        if alias is None and (group := _group_of(session_key)) is not None:
            alias = self._settings.get(group).model
        return self.offered.get(alias) if alias and alias != DEFAULT else None

    def choose(self, session_key: str, alias: str | None) -> None:
        """Switch the chat to `alias` (one of `offered`), or back to the default with None."""
        if alias is None and _group_of(session_key) is not None:
            alias = DEFAULT  # the thread keeps the default even when its chat chose a model
        self._settings.update(session_key, model=alias)
        logger.info("[%s] model set to %s", session_key, alias or "the default")


def _group_of(session_key: str) -> str | None:
    """The chat's key for a thread's or topic's session key; None for a chat's own key."""
    try:
        chat = ChatRef.parse(session_key)
    except ValueError:
        return None
    return chat.whole_chat.session_key if chat.thread_id else None
