"""Who and what a model call is for, carried in a context variable so every provider call is attributed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, get_args

from bot.bus import ChatRef, InboundMessage, Trust

Purpose = Literal[
    "chat",
    "subagent",
    "ask_agent",
    "consolidation",
    "heartbeat",
    "cron",
    "trigger",
    "transcription",
    "compaction",
    "image",
    "embedding",
    "python",
    "speech",
]
PURPOSES: tuple[Purpose, ...] = get_args(Purpose)
BACKGROUND: frozenset[str] = frozenset({"heartbeat", "consolidation", "embedding"})


@dataclass(frozen=True, slots=True)
class Charge:
    """The ledger's who and why: the chat it is for, and `sender`, a person or `channel:user id` (None for background
    work)."""

    purpose: Purpose = "chat"
    chat: ChatRef | None = None
    sender: str | None = None
    role: Trust | None = None

    @property
    def session_key(self) -> str | None:
        """The chat's session key, as the ledger records it; None for work of no chat."""
        return None if self.chat is None else self.chat.session_key

    @property
    def is_background(self) -> bool:
        """Work charged to no sender (heartbeat, consolidation, embedding the memory index)."""
        return self.sender is None and self.purpose in BACKGROUND


_UNATTRIBUTED = Charge()
_current: ContextVar[Charge | None] = ContextVar("relaybot_charge", default=None)


def current_charge() -> Charge:
    """The charge of the model calls made in this task (a chat call with no sender when none was set)."""
    return _current.get() or _UNATTRIBUTED


@contextmanager
def charged_to(charge: Charge) -> Iterator[Charge]:
    """Attribute the model calls made inside the block (and in tasks it starts) to `charge`."""
    token = _current.set(charge)
    try:
        yield charge
    finally:
        _current.reset(token)


def sender_ref(channel: str, user_id: str) -> str:
    """The ledger's sender key, `channel:user id`."""
    return f"{channel}:{user_id}"


def payer_of(message: InboundMessage) -> str:
    """Who a user's message is charged to: their person when `identities` names one, else `channel:user id`."""
    return message.person or sender_ref(message.chat.channel, message.sender_id)


def charge_for(message: InboundMessage) -> Charge:
    """The charge of a turn: the sender's chat, a cron job's creator, a trigger (`trigger:<name>`), or the heartbeat
    (no sender)."""
    if message.origin == "heartbeat":
        return Charge("heartbeat", message.chat, None, message.trust)
    if message.kind == "system":
        purpose: Purpose = "chat"
        if message.origin == "cron" or message.origin == "trigger":
            purpose = message.origin
        return Charge(purpose, message.chat, message.charge_to, message.trust)
    return Charge("chat", message.chat, payer_of(message), message.trust)
