"""A user's edit in the lanes: a queued message is replaced, a running turn is steered, an answer follows `on_edit`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from bot.agent.lanes import Lane
from bot.bus import InboundMessage
from bot.config.channels.base import OnEdit
from bot.sessions.session import Sessions
from bot.storage.recent import RecentMap

logger = logging.getLogger(__name__)

REMEMBERED = 1_000  # messages of the turns taken last: an edit of an older one is answered as a new message
REMEMBERED_BYTES = 64 * 1024  # and at most this much of them: about 380 messages of Telegram chats
RERUN_NOTE = "[I edited my earlier message after your answer; answer it again as it now reads:]"
ANSWERED_NOTE = "[The user edited a message you had already answered; it now reads:]"
RUNNING_NOTE = "[The user edited their message while you were working on it; it now reads:]"


def edited_ids(message: InboundMessage) -> set[str]:
    """The platform ids an edit may name to reach this message: its own, and the original it edits."""
    return {pid for pid in (message.platform_message_id, message.edit_of) if pid}


class EditDesk:
    """Routes each edit to where its original is now; remembers (bounded, in memory) which messages turns took."""

    def __init__(
        self,
        sessions: Sessions,
        user_text: Callable[[InboundMessage], str],
        complete: Callable[[Sequence[str]], Awaitable[None]],
        remembered: int = REMEMBERED,
    ) -> None:
        self._sessions = sessions
        self._user_text = user_text
        self._complete = complete
        self._taken: RecentMap[str, None] = RecentMap(remembered, max_bytes=REMEMBERED_BYTES)

    def taken(self, batch: Sequence[InboundMessage]) -> frozenset[str]:
        """Note that a turn takes these messages; returns the platform ids an edit may name to reach them."""
        ids = frozenset(pid for message in batch for pid in edited_ids(message))
        for pid in ids:
            key = f"{batch[-1].chat.session_key}/{pid}"
            self._taken[key] = None
        return ids

    def steering_text(self, edit: InboundMessage, running: frozenset[str]) -> str:
        """What a running turn sees of an edit: of one of its own messages, or of one answered before."""
        if edit.edit_of in running:
            return f"{RUNNING_NOTE}\n{edit.text}"
        return f"{ANSWERED_NOTE}\n{self._user_text(edit)}"

    async def take(self, edit: InboundMessage, lane: Lane | None, on_edit: OnEdit) -> InboundMessage | None:
        """Apply the edit; returns a message to queue as a turn (a re-run, or an edit of a message never taken)."""
        key = edit.chat.session_key
        original = edit.edit_of or ""
        if lane is not None and _replace_queued(lane, edit):
            logger.info("[%s] queued message %s replaced by its edit", key, original)
            await self._complete([edit.id])
            return None
        if lane is not None and original in lane.running:
            logger.info("[%s] edit of %s steers the running turn", key, original)
            lane.edits.append(edit)
            return None
        if f"{key}/{original}" not in self._taken:
            logger.info("[%s] edit of %s, a message no turn took: answered as a new message", key, original)
            return replace(edit, platform_message_id=original, edit_of=None)
        return await self.answered(edit, lane, on_edit)

    async def answered(self, edit: InboundMessage, lane: Lane | None, on_edit: OnEdit) -> InboundMessage | None:
        """An edit of a message already answered: ignored, noted in the session, or queued to answer again."""
        key = edit.chat.session_key
        logger.info("[%s] edit of answered message %s: %s", key, edit.edit_of, on_edit)
        if on_edit == "rerun":
            return replace(edit, text=f"{RERUN_NOTE}\n{edit.text}", stream=False)
        if on_edit == "note":
            if lane is not None and lane.turn is not None:
                lane.edits.append(edit)  # the session is mid-turn: the note joins it and waits if it comes late
                return None
            session = await self._sessions.load(key)
            note = f"{ANSWERED_NOTE}\n{self._user_text(edit)}"
            self._sessions.append(session, [{"role": "user", "content": note}], inbound_ids=[edit.id])
        await self._complete([edit.id])
        return None


def _replace_queued(lane: Lane, edit: InboundMessage) -> bool:
    """Swap a queued message's content for its edit, in place; False when it is not queued."""
    for index, queued in enumerate(lane.pending):
        if edit.edit_of in edited_ids(queued):
            lane.pending[index] = replace(
                queued,
                text=edit.text,
                attachments=edit.attachments or queued.attachments,
                reply_to=edit.reply_to or queued.reply_to,
            )
            return True
    return False
