"""Recall without being asked: before each turn, the scope's passages most relevant to the incoming message go
before it in the prompt, within a token budget; the system prompt stays byte-stable for prompt caching."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.agent.persona.routes import Persona
from bot.bus import ChatRef, InboundMessage
from bot.chats.rules import ChatRulesBook
from bot.config.schema_memory import AutoRecallConfig
from bot.llm.tokens import CHARS_PER_TOKEN
from bot.memory.index.ranking import Shown
from bot.memory.index.rendering import block_room, recalled_block
from bot.memory.index.scopes import MemoryIndexes

logger = logging.getLogger(__name__)

PASSAGES = 5
WINDOW_CHARS = 1200  # of one recalled window: the best few share the budget


class AutoRecall:
    """Finds and renders the recalled block of a turn; on unless the chat's rules or the persona switch it off."""

    def __init__(
        self, indexes: MemoryIndexes, config: AutoRecallConfig, timezone: str, rules: ChatRulesBook | None = None
    ) -> None:
        self._indexes = indexes
        self._config = config
        self._zone = ZoneInfo(timezone)
        self._rules = rules

    def configure(self, config: AutoRecallConfig) -> None:
        """Take a reloaded `memory.auto_recall` from the next turn."""
        self._config = config

    def wanted(self, message: InboundMessage, persona: Persona | None) -> bool:
        """Whether this turn recalls: the chat's rule if it sets one, else the persona's, else the config's."""
        if self._rules is not None:
            rule = self._rules.for_chat(message.chat, message.server_id, message.is_direct).auto_recall
            if rule is not None:
                return rule
        if persona is not None and persona.auto_recall is not None:
            return persona.auto_recall
        return self._config.enabled

    def saved(self, scope: Path, session_key: str) -> None:
        """A turn saved messages to the session: list it for the scope and index them in the background."""
        self._indexes.saved(scope, session_key)

    async def block(self, scope: Path, chat: ChatRef, text: str, shown_from: int, window: int) -> str:
        """The passages of the scope for `text`, leaving out the session's messages from `shown_from` on and the
        last `window` of the chat's other sessions (its threads, or its channel): the conversation going on."""
        key = chat.session_key
        shown = Shown(key, shown_from, chat.whole_chat.session_key, window)
        chars = self._config.max_tokens * CHARS_PER_TOKEN
        windows = (WINDOW_CHARS, block_room(chars))
        hits = await self._indexes.search(scope, text, PASSAGES, shown=shown, join=key, window_chars=windows)
        block = recalled_block(hits, self._zone, chars)
        if block:
            logger.debug("[%s] recalled passages (%d characters)", key, len(block))
        return block


def with_recalled(message: dict[str, Any], block: str) -> dict[str, Any]:
    """The new user message with the recalled block before its text (a copy; the session keeps the plain one)."""
    content = message.get("content")
    if isinstance(content, list) and content and content[0].get("type") == "text":
        first = {**content[0], "text": f"{block}\n\n{content[0]['text']}"}
        return {**message, "content": [first, *content[1:]]}
    return {**message, "content": f"{block}\n\n{content}"}
