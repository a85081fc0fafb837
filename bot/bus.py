"""Bus messages and the MessageBus that carries them between channels and the agent."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, Protocol


def new_id() -> str:
    """A fresh unique message id."""
    return uuid.uuid4().hex


class Trust(StrEnum):
    """What a sender may do: owners get every tool, guests the guest set."""

    OWNER = "owner"
    GUEST = "guest"


TRUST_ORDER = (Trust.GUEST, Trust.OWNER)
"""Every trust level, least trusted first."""


def lowest_trust(messages: Iterable[InboundMessage]) -> Trust:
    """The trust a turn carrying `messages` acts with: the least trusted sender's."""
    return min((m.trust for m in messages), key=TRUST_ORDER.index, default=Trust.GUEST)


@dataclass(frozen=True, slots=True)
class ChatRef:
    """Where a message belongs: a platform, a chat and optionally a thread in it."""

    channel: str
    chat_id: str
    thread_id: str | None = None

    @property
    def session_key(self) -> str:
        """`channel:chat_id` or `channel:chat_id:thread_id`."""
        base = f"{self.channel}:{self.chat_id}"
        return f"{base}:{self.thread_id}" if self.thread_id else base

    @classmethod
    def parse(cls, text: str) -> ChatRef:
        """Read `channel:chat_id[:thread_id]`; raise ValueError when malformed."""
        parts = text.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise ValueError(f"{text!r} is not a chat; use channel:chat_id such as telegram:123")
        return cls(*parts)


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file that came with a message, already saved locally."""

    path: str
    mime_type: str
    kind: Literal["image", "file", "voice"] = "file"


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """A message for the agent: from a user, or a system message aimed at a chat."""

    chat: ChatRef
    sender_id: str
    text: str
    trust: Trust = Trust.GUEST
    sender_name: str | None = None
    is_direct: bool = True
    mentioned: bool = False
    kind: Literal["user", "system"] = "user"
    stream: bool = False
    attachments: tuple[Attachment, ...] = ()
    platform_message_id: str | None = None
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """A message for a chat; `id` makes delivery at-most-once.

    `finalises` names the turn whose live (streamed) message this reply completes in place; a channel with no
    such live message, e.g. after a restart, sends it as a new message instead.
    """

    chat: ChatRef
    text: str
    in_reply_to: str | None = None
    reply_to_platform_id: str | None = None
    kind: Literal["reply", "progress", "notice", "error"] = "reply"
    id: str = field(default_factory=new_id)
    finalises: str | None = None


class MessageBus(Protocol):
    """Carries inbound messages to the agent and outbound messages to channels."""

    async def publish_inbound(self, message: InboundMessage) -> None: ...

    async def consume_inbound(self) -> InboundMessage: ...

    async def publish_outbound(self, message: OutboundMessage) -> None: ...

    async def consume_outbound(self) -> OutboundMessage: ...


class LocalBus:
    """The in-process bus: two unbounded asyncio queues."""

    def __init__(self) -> None:
        self._inbound: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self._outbound: asyncio.Queue[OutboundMessage] = asyncio.Queue()

    async def publish_inbound(self, message: InboundMessage) -> None:
        self._inbound.put_nowait(message)

    async def consume_inbound(self) -> InboundMessage:
        return await self._inbound.get()

    async def publish_outbound(self, message: OutboundMessage) -> None:
        self._outbound.put_nowait(message)

    async def consume_outbound(self) -> OutboundMessage:
        return await self._outbound.get()
