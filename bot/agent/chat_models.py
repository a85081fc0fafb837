"""A model per chat: the models `llm.models` offers, and which one each chat chose with `/model`."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.chats.settings import ChatSettingsStore
from bot.config.schema import LLMConfig, ModelChoiceConfig

logger = logging.getLogger(__name__)


def chosen_llm(base: LLMConfig, choice: ModelChoiceConfig) -> LLMConfig:
    """`base` (the persona's or the config's model settings) speaking with the chosen model instead."""
    changes: dict[str, object] = {"model": choice.name, "context_window": None}
    if choice.api_base is not None:
        changes["api_base"] = choice.api_base
    if choice.api_key is not None:
        changes["api_key"] = choice.api_key
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
        """The chat's chosen model; None for the persona's or route's own (also when its alias left the config)."""
        if not self.offered:
            return None
        alias = self._settings.get(session_key).model
        return self.offered.get(alias) if alias else None

    def choose(self, session_key: str, alias: str | None) -> None:
        """Switch the chat to `alias` (one of `offered`), or back to the default with None."""
        self._settings.update(session_key, model=alias)
        logger.info("[%s] model set to %s", session_key, alias or "the default")
