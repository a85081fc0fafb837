"""Reactions as status: 👀 on a message once accepted (`ack`), then answered or failed at the turn's end (`status`).

A turn that replies is marked once its reply is delivered, so the mark never runs ahead of the answer."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bot.bus import ChatRef, InboundMessage
from bot.events import Delivered, DeliveryFailed, TurnFinished, TurnStarted
from bot.storage.recent import RecentMap
from channels.abilities import ReactionStatus, Reacts, reacts
from channels.base import Channel

logger = logging.getLogger(__name__)

ReactionMode = Literal["off", "ack", "status"]
ANSWERS = frozenset({"reply", "error"})
"""The kinds of outbound message that carry a turn's final answer."""
FAILED_OUTCOMES = frozenset({"timed out", "crashed", "provider error", "key refused", "budget exceeded"})
"""Turn outcomes that mark a message as failed; a cancelled turn leaves its mark as it is."""
MAX_TRACKED = 1000  # marks waiting for their turn's end, across chats; the oldest are forgotten first

Spawn = Callable[[Coroutine[Any, Any, None], str], None]


@dataclass(frozen=True, slots=True)
class _Mark:
    chat: ChatRef
    message_id: str


def default_mode(message: InboundMessage) -> ReactionMode:
    """Without a `reactions` setting: `ack` in groups, `off` in direct chats."""
    return "off" if message.is_direct else "ack"


class Reactions:
    """Puts each channel's `reactions` mode into effect; a reaction that fails is logged and never touches the reply."""

    def __init__(self, modes: Mapping[str, ReactionMode | None], spawn: Spawn, tracked: int = MAX_TRACKED) -> None:
        self._modes = modes
        self._spawn = spawn
        # session key -> messages seen, not yet in a turn; past `tracked` marks the least recent chat's are dropped
        self._waiting: RecentMap[str, list[_Mark]] = RecentMap(tracked, weight=len, max_weight=tracked)
        self._running: dict[str, list[_Mark]] = {}  # turn id -> the messages it answers
        # turn id -> marks due on delivery
        self._answering: RecentMap[str, tuple[Reacts, list[_Mark], ReactionStatus]] = RecentMap(tracked)

    def accepted(self, channel: Channel, message: InboundMessage) -> None:
        """A user's message passed the gate: mark it seen under `ack` and `status`."""
        mode = self._modes.get(channel.key) or default_mode(message)
        eligible = message.kind == "user" and message.press is None and message.edit_of is None
        if mode == "off" or not eligible or not message.platform_message_id or not reacts(channel):
            return
        mark = _Mark(message.chat, message.platform_message_id)
        self._react(channel, mark, "seen")
        if mode == "status":
            key, marks = message.chat.session_key, self._waiting.get(message.chat.session_key)
            if marks is None:
                self._waiting[key] = [mark]
            else:
                marks.append(mark)
                self._waiting.reweigh(key)

    def turn_started(self, event: TurnStarted) -> None:
        """The turn answers every message seen in its chat so far."""
        marks = self._waiting.pop(event.session_key, None)
        if marks:
            self._running[event.turn_id] = marks

    def turn_finished(self, channel: Channel | None, event: TurnFinished) -> None:
        """Mark the turn's messages answered, or failed; a cancelled turn leaves them as they are."""
        marks = self._running.pop(event.turn_id, [])
        if not marks or event.outcome == "cancelled" or not reacts(channel):
            return
        status: ReactionStatus = "failed" if event.outcome in FAILED_OUTCOMES else "done"
        if event.replied:
            self._answering[event.turn_id] = (channel, marks, status)
            return
        for mark in marks:
            self._react(channel, mark, status)

    def delivery(self, event: Delivered | DeliveryFailed) -> None:
        """A turn's reply went out: mark its messages as the turn ended; a reply that could not be sent, failed."""
        if isinstance(event, Delivered) and event.kind not in ANSWERS:
            return
        due = self._answering.pop(event.in_reply_to, None) if event.in_reply_to else None
        if due is None:
            return
        channel, marks, status = due
        for mark in marks:
            self._react(channel, mark, status if isinstance(event, Delivered) else "failed")

    def _react(self, channel: Reacts, mark: _Mark, status: ReactionStatus) -> None:
        self._spawn(_safely(channel, mark, status), f"react:{mark.chat.session_key}")


async def _safely(channel: Reacts, mark: _Mark, status: ReactionStatus) -> None:
    try:
        await channel.react(mark.chat, mark.message_id, status)
    except Exception as exc:
        logger.info("[%s] reaction %s on %s failed: %s", mark.chat.session_key, status, mark.message_id, exc)
