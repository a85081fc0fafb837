"""The group buffer: messages the bot overheard in a chat, kept in memory and brought to the next mention."""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import replace

from bot.bus import GroupLine, InboundMessage
from bot.commands.catalogue import NEW
from bot.commands.parse import invocation
from bot.storage.recent import RecentMap

logger = logging.getLogger(__name__)

MAX_CHATS = 10_000


class GroupContext:
    """Per-chat bounded buffers (lines and characters); never written to disk, lost on restart by design."""

    def __init__(self, max_chats: int = MAX_CHATS) -> None:
        self._chats: RecentMap[str, deque[GroupLine]] = RecentMap(max_chats)

    def keep(self, message: InboundMessage, line: GroupLine, limit: int, chars: int) -> None:
        """Add a line overheard from `message`, dropping the oldest past `limit` lines or `chars` characters."""
        if limit <= 0:
            return
        key = heard_at(message)
        if len(line.text) > chars:
            line = replace(line, text=line.text[:chars])
        lines = self._chats.pop(key, None) or deque()
        lines.append(line)
        while len(lines) > limit or sum(len(kept.text) for kept in lines) > chars:
            lines.popleft()
        self._chats[key] = lines

    def served(self, message: InboundMessage) -> InboundMessage:
        """A served message: a group mention carries the buffer (which empties), /new clears it."""
        if message.is_direct or message.kind != "user" or message.edit_of or message.press:
            return message
        key = heard_at(message)
        command = invocation(message.text)
        if command is not None and command.built_in is NEW:  # the buffer goes with the session
            self._chats.pop(key, None)
            return message
        if command is not None or key not in self._chats:
            return message  # other commands leave the buffer for the next real question
        # The platform may have read the room itself (a Slack thread's earlier replies): a line is shown once.
        own = {(line.sender_id, line.text) for line in message.context}
        lines = tuple(line for line in self._chats.pop(key) or () if (line.sender_id, line.text) not in own)
        logger.info("[%s] mention brings %d overheard group messages as context", key, len(lines))
        return replace(message, context=tuple(sorted(message.context + lines, key=lambda line: line.at)))

    def lines(self, key: str) -> tuple[GroupLine, ...]:
        """What is buffered for a chat now, oldest first."""
        return tuple(self._chats.get(key, ()))


def heard_at(message: InboundMessage) -> str:
    """The buffer a message belongs to: its session's, or its chat's when it opens a thread of its own.

    With Slack's `reply_in_thread` every top-level message is the root of its own thread session; what is
    said at the top level is one conversation all the same, and a top-level mention should hear it.
    """
    chat = message.chat
    root = chat.thread_id is not None and message.platform_message_id in (
        chat.thread_id,
        f"{chat.chat_id}:{chat.thread_id}",
    )
    return chat.whole_chat.session_key if root else chat.session_key
