"""The plugin hook points around a turn: a message arrives, a turn starts and ends, a reply is sent."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from bot.bus import ChatRef, InboundMessage
from bot.commands.parse import invocation
from bot.events import EventBus, ReplyDropped
from bot.hooks.handlers import Hooks
from bot.hooks.hook_events import (
    AgentBootstrap,
    AgentEnd,
    BeforeAgentStart,
    Block,
    CommandInvoked,
    CommandIssued,
    MessageReceived,
    MessageSending,
    MessageSent,
    Replace,
    SessionEnd,
    SessionStart,
)
from bot.sessions.session import Session, Sessions

logger = logging.getLogger(__name__)


TurnAdded = tuple[tuple[dict[str, Any], ...], tuple[int, int]]
"""The messages a turn added to its session, and its prompt and completion tokens."""


@dataclass(frozen=True, slots=True)
class TurnMark:
    """Where a session stood when a turn began: `agent_end` reports what came after."""

    key: str
    total: int
    prompt_tokens: int
    completion_tokens: int

    @classmethod
    def of(cls, session: Session) -> TurnMark:
        """The mark of a session now."""
        return cls(session.key, session.total, session.prompt_tokens, session.completion_tokens)

    def since(self, sessions: Sessions) -> TurnAdded:
        """What the session gained since the mark (nothing once /new replaced it)."""
        session = sessions.get(self.key)
        if session.total < self.total:
            return (), (0, 0)
        added = tuple(session.messages[max(0, self.total - session.base) :])
        return added, (session.prompt_tokens - self.prompt_tokens, session.completion_tokens - self.completion_tokens)


class TurnHooks:
    """Builds each hook point's event for the agent loop and applies its decision (no event without a handler)."""

    def __init__(self, hooks: Hooks, events: EventBus | None = None) -> None:
        """`events` hears of a reply a hook dropped, so the run it ends is seen to end."""
        self.hooks = hooks
        self._events = events or EventBus()

    async def received(self, message: InboundMessage) -> InboundMessage | Block:
        """`message_received`: the message, as a plugin rewrote it, or the Block whose reason the sender gets."""
        if not self.hooks.has("message_received"):
            return message
        event = MessageReceived(message.chat, message.sender_id, message.trust.value, message.text, message.id)
        decision = await self.hooks.run("message_received", event)
        if isinstance(decision, Block):
            return decision
        if isinstance(decision, Replace):
            return replace(message, text=str(decision.value))
        return message

    async def issued(self, message: InboundMessage) -> None:
        """`command`: /new, /reset or /stop arrived (hooks hear it before it acts, /stop before any turn ends)."""
        if self.hooks.has("command"):
            word = message.text[1:].split(maxsplit=1)[0].split("@", 1)[0].lower()
            event = CommandIssued(message.chat, message.sender_id, message.trust.value, word)
            await self.hooks.run("command", event)

    def command(self, message: InboundMessage) -> tuple[str, CommandInvoked] | None:
        """The plugin command a message invokes (`/name args`) and its event, or None when it is none."""
        found = invocation(message.text) if self.hooks.commands else None
        if found is None or found.word not in self.hooks.commands:
            return None
        return found.word, CommandInvoked(
            message.chat, message.sender_id, message.trust.value, message.text, found.args, message.sender_name or ""
        )

    async def bootstrap(self, message: InboundMessage, files: tuple[str, ...]) -> tuple[str, ...] | None:
        """`agent_bootstrap`: the workspace files a hook chose for the system prompt, or None to keep the defaults."""
        if not self.hooks.has("agent_bootstrap"):
            return None
        event = AgentBootstrap(message.chat, message.trust.value, files)
        decision = await self.hooks.run("agent_bootstrap", event)
        if not isinstance(decision, Replace) or not isinstance(decision.value, list | tuple):
            return None
        return tuple(str(name) for name in decision.value)

    async def starting(
        self, message: InboundMessage, text: str, messages: list[dict[str, Any]], first: bool
    ) -> list[dict[str, Any]]:
        """`session_start` on a first turn, then `before_agent_start` (its Replace is the turn's system prompt)."""
        if first and self.hooks.has("session_start"):
            await self.hooks.run("session_start", SessionStart(message.chat))
        if not self.hooks.has("before_agent_start"):
            return messages
        event = BeforeAgentStart(
            message.chat, message.sender_id, message.trust.value, text, str(messages[0]["content"])
        )
        decision = await self.hooks.run("before_agent_start", event)
        if isinstance(decision, Replace):
            messages[0] = {**messages[0], "content": str(decision.value)}
        return messages

    async def ended(
        self, message: InboundMessage, outcome: str, reply: str | None, mark: TurnMark, sessions: Sessions
    ) -> None:
        """`agent_end`: the turn's outcome, the reply it is about to send (None when it sends none), what it added
        since `mark` (read from `sessions` only when a plugin hears it: with Redis, a read is a round trip)."""
        if self.hooks.has("agent_end"):
            messages, (prompt, completion) = mark.since(sessions)
            event = AgentEnd(message.chat, message.sender_id, outcome, reply, messages, prompt, completion)
            await self.hooks.run("agent_end", event)

    async def session_ended(self, chat: ChatRef, closed: int) -> None:
        """`session_end`: /new archived a session that held `closed` messages."""
        if self.hooks.has("session_end"):
            await self.hooks.run("session_end", SessionEnd(chat, closed))

    async def sending(self, message: InboundMessage, text: str) -> str | None:
        """`message_sending`: the reply's text, as a plugin rewrote it, or None when one dropped it."""
        if not self.hooks.has("message_sending"):
            return text
        decision = await self.hooks.run("message_sending", MessageSending(message.chat, text, message.id))
        if isinstance(decision, Block):
            logger.info("[%s] reply dropped by a plugin: %s", message.chat.session_key, decision.reason)
            self._events.emit(ReplyDropped(message.chat, message.id, decision.reason))
            return None
        return str(decision.value) if isinstance(decision, Replace) else text

    async def sent(self, message: InboundMessage, text: str) -> None:
        """`message_sent`: the reply is in the outbound queue."""
        if self.hooks.has("message_sent"):
            await self.hooks.run("message_sent", MessageSent(message.chat, text, message.id))
