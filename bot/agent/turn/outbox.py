"""What a turn has already said in its own chat, so its final reply never says it again."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from bot.bus import ChatRef, OutboundMessage


def _normalized(text: str) -> str:
    return " ".join(text.split()).casefold()


class TurnOutbox:
    """Publishes one turn's tool messages and remembers the ones that went to the turn's own chat."""

    def __init__(self, chat: ChatRef, publish: Callable[[OutboundMessage], Awaitable[object]]) -> None:
        self._chat = chat
        self._publish = publish
        self._said: list[str] = []

    @property
    def spoke(self) -> bool:
        """Whether the turn has sent anything to its own chat."""
        return bool(self._said)

    async def send(self, message: OutboundMessage) -> None:
        """Publish a message now, noting it when it goes to the turn's chat."""
        if message.chat == self._chat and message.text.strip():
            self._said.append(_normalized(message.text))
        await self._publish(message)

    def repeats(self, text: str) -> bool:
        """True when messages to the turn's chat already hold all of `text` (whole words, any case or spacing)."""
        wanted = re.escape(_normalized(text))
        return bool(wanted) and any(re.search(rf"(?<!\w){wanted}(?!\w)", said) for said in self._said)
