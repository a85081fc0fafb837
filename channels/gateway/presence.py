"""Presence: what a chat sees while its turn runs — typing, status reactions, and the live reply as it grows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.events import (
    Delivered,
    DeliveryFailed,
    Event,
    ReasoningDelta,
    StreamDelta,
    StreamStarted,
    ToolCalled,
    TurnFinished,
    TurnStarted,
)
from channels.abilities import shows_typing, streams_replies
from channels.gateway.reactions import ReactionMode, Reactions
from channels.gateway.supervisor import Slot, Spawn
from channels.gateway.typing_indicators import TypingIndicators
from channels.streaming import LiveReply


class Presence:
    """Follows the turn events of every chat and shows them on the chat's channel; nothing here holds up a reply."""

    def __init__(self, slots: Mapping[str, Slot], reactions: Mapping[str, ReactionMode | None], spawn: Spawn) -> None:
        """`slots` are the supervised channels by name; `reactions` is each channel's `reactions` setting."""
        self._slots = slots
        self._spawn = spawn
        self._typing = TypingIndicators()
        self._reactions = Reactions(reactions, spawn)
        self._live: dict[str, LiveReply] = {}
        self._handlers: dict[type, Callable[[Any], None]] = {
            TurnStarted: self._on_turn_started,
            TurnFinished: self._on_turn_finished,
            Delivered: self._reactions.delivery,
            DeliveryFailed: self._reactions.delivery,
            StreamStarted: self._on_stream_started,
            StreamDelta: self._on_stream_delta,
            ReasoningDelta: self._on_reasoning_delta,
            ToolCalled: self._on_tool_called,
        }

    @property
    def followed(self) -> tuple[type, ...]:
        """The event types `on_event` takes."""
        return tuple(self._handlers)

    def on_event(self, event: Event) -> None:
        """Show one turn event on its chat."""
        self._handlers[type(event)](event)

    def accepted(self, name: str, message: InboundMessage) -> None:
        """Channel `name`'s message passed the gate: mark it seen, where its reactions mode says so."""
        if (slot := self._slots.get(name)) is not None:
            self._reactions.accepted(slot.channel, message)

    def replying(self, chat: ChatRef) -> None:
        """A message for `chat` is on its way out: its typing indicator stops."""
        self._typing.stop(chat.session_key)

    async def finish_live(self, message: OutboundMessage) -> bool:
        """Complete the turn's live reply with the final text, if it has one; False: send it as a message."""
        live = self._live.pop(message.finalises, None) if message.finalises else None
        return live is not None and await live.finish(message)

    async def stop(self) -> None:
        """Stop every typing indicator and close every live reply."""
        await self._typing.stop_all()
        lives, self._live = list(self._live.values()), {}
        await asyncio.gather(*(live.close() for live in lives))

    def _on_turn_started(self, event: TurnStarted) -> None:
        self._reactions.turn_started(event)
        slot = self._slots.get(event.chat.channel_key)
        if slot and shows_typing(slot.channel):
            self._typing.start(event.session_key, partial(_show_typing, slot, event.chat))

    def _on_turn_finished(self, event: TurnFinished) -> None:
        self.replying(event.chat)
        finished = self._slots.get(event.chat.channel_key)
        self._reactions.turn_finished(finished.channel if finished else None, event)
        live = self._live.pop(event.turn_id, None) if not event.replied else None
        if live is not None:
            self._spawn(live.abandon(event.outcome), f"live-abandon:{event.session_key}")

    def _on_stream_started(self, event: StreamStarted) -> None:
        """Create the turn's live reply at its first model call; tell it each later call started."""
        live = self._live.get(event.turn_id)
        slot = self._slots.get(event.chat.channel_key)
        if live is None and slot and slot.ready.is_set() and streams_replies(slot.channel):
            live = slot.channel.live_reply(event.chat, event.reply_to, event.recipient)
            if live is not None:
                self._live[event.turn_id] = live
        if live is not None:
            live.call_started()

    def _on_stream_delta(self, event: StreamDelta) -> None:
        if live := self._live.get(event.turn_id):
            live.add(event.text)

    def _on_reasoning_delta(self, event: ReasoningDelta) -> None:
        if live := self._live.get(event.turn_id):
            live.add_reasoning(event.text)

    def _on_tool_called(self, event: ToolCalled) -> None:
        if live := self._live.get(event.turn_id):
            live.tool_started(event.tool)


async def _show_typing(slot: Slot, chat: ChatRef) -> None:
    """Typing in `chat`, once its channel is connected."""
    if slot.ready.is_set():
        assert shows_typing(slot.channel)
        await slot.channel.show_typing(chat)
