"""Bus messages: frozen dataclasses of plain fields that round-trip through JSON."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from operator import attrgetter
from typing import Any, Literal

from bot.storage.compact_json import dumps

Origin = Literal["user", "heartbeat", "cron", "subagent", "trigger"]
"""Who put an inbound message on the bus: a person on a channel, one of the bot's own schedulers and workers, or a
webhook from outside (a trigger)."""
_UNSAFE_IN_FOLDER = re.compile(r"[^\w.-]")
ACCOUNT_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
"""What a platform account's name may be: it is written into session keys and folder names."""


def new_id() -> str:
    """A fresh unique message id: a random UUID (version 4) in hex, as `uuid.uuid4().hex` gives, without its object."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40
    raw[8] = raw[8] & 0x3F | 0x80
    return raw.hex()


class Trust(StrEnum):
    """A sender's role, lowest first: guest < user < admin < owner; each role has its own tool set."""

    GUEST = "guest"
    USER = "user"
    ADMIN = "admin"
    OWNER = "owner"

    @property
    def rank(self) -> int:
        """Position in guest < user < admin < owner."""
        return TRUST_ORDER.index(self)

    def at_least(self, other: Trust) -> bool:
        """Whether this role is `other` or above it."""
        return self.rank >= other.rank


TRUST_ORDER = (Trust.GUEST, Trust.USER, Trust.ADMIN, Trust.OWNER)
"""Every trust level, least trusted first."""


def lowest_trust(messages: Iterable[InboundMessage]) -> Trust:
    """The trust a turn carrying `messages` acts with: the least trusted sender's."""
    return min((m.trust for m in messages), key=TRUST_ORDER.index, default=Trust.GUEST)


@dataclass(frozen=True, slots=True)
class ChatRef:
    """Where a message belongs: a platform, a chat and optionally a thread in it.

    `account` names which of the platform's bots the chat talks to (`channels.<platform>.accounts`); None is the
    platform's one default bot. A named account is part of the session key (`telegram@work:123`), so the same chat
    id on two bots is two sessions; the default bot's keys stay `telegram:123`.
    """

    channel: str
    chat_id: str
    thread_id: str | None = None
    account: str | None = None

    @property
    def channel_key(self) -> str:
        """`channel` or `channel@account`: the one channel instance (bot) this chat is served through."""
        return channel_key(self.channel, self.account)

    @property
    def session_key(self) -> str:
        """`channel[@account]:chat_id[:thread_id]`; `ChatRef.parse` reads it back."""
        base = f"{self.channel_key}:{self.chat_id}"
        return f"{base}:{self.thread_id}" if self.thread_id else base

    @property
    def whole_chat(self) -> ChatRef:
        """This chat on the same bot, without its thread."""
        return ChatRef(self.channel, self.chat_id, None, self.account)

    @property
    def folder(self) -> str:
        """`channel[@account]/chat_id` as a safe relative folder: where this chat's inbox and outbox files live."""
        return f"{self.channel_key}/{_UNSAFE_IN_FOLDER.sub('_', self.chat_id)}"

    @classmethod
    def parse(cls, text: str) -> ChatRef:
        """Read `channel[@account]:chat_id[:thread_id]`; raise ValueError when malformed.

        A Matrix room id holds its server name (`matrix:!abc:example.org`), and a thread there is `:$root`."""
        head, _, rest = text.partition(":")
        channel, at, account = head.partition("@")
        if not channel or (at and not ACCOUNT_NAME.fullmatch(account)):
            raise ValueError(f"{text!r} is not a chat; an account is letters, digits, _ and - as in telegram@work:123")
        if rest.startswith("!") and ":" in rest:
            room, _, root = rest.partition(":$")
            return cls(channel, room, f"${root}" if root else None, account or None)
        parts = text.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise ValueError(f"{text!r} is not a chat; use channel:chat_id such as telegram:123 or telegram@work:123")
        return cls(channel, parts[1], parts[2] if len(parts) == 3 else None, account or None)


class AboutChat:
    """A base for the frozen events about one chat: their `chat` field, and the session key derived from it."""

    __slots__ = ()
    chat: ChatRef

    @property
    def session_key(self) -> str:
        """The chat's session key (`telegram:123`), for consumers that index by the string."""
        return self.chat.session_key


def channel_key(channel: str, account: str | None) -> str:
    """How the gateway names one bot of a platform: `telegram` for the default bot, `telegram@work` for another."""
    return f"{channel}@{account}" if account else channel


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file that came with a message, already saved locally; `name` is the name its sender gave it."""

    path: str
    mime_type: str
    kind: Literal["image", "file", "voice"] = "file"
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Quote:
    """The message a user replied to or quoted: up to 1,000 characters of it, who wrote it, and its image if any.

    `trust` is the author's role, filled in by the access policy from `author_id`; the agent marks a quote from
    a sender of lower trust than the asker as untrusted, like a fetched page.
    """

    text: str
    author_id: str | None = None
    author_name: str | None = None
    from_bot: bool = False
    trust: Trust = Trust.GUEST
    image: Attachment | None = None
    platform_message_id: str | None = None


@dataclass(frozen=True, slots=True)
class GroupLine:
    """A group message the bot was not asked to answer, kept in memory and brought to the next mention."""

    sender_id: str
    sender_name: str | None
    text: str
    at: float
    trust: Trust = Trust.GUEST


@dataclass(frozen=True, slots=True)
class Press:
    """A button pressed under a message that offered choices: which prompt, which choice, and where it was shown."""

    prompt_id: str
    choice_id: str
    prompt_message_id: str | None = None


@dataclass(frozen=True, slots=True)
class Choice:
    """One button under an outbound message; `id` comes back in a `Press`, `label` is what people see."""

    id: str
    label: str
    style: Literal["default", "primary", "danger"] = "default"


@dataclass(frozen=True, slots=True)
class EarlierMessage:
    """One message of a conversation a client keeps itself (the OpenAI-compatible endpoint's stateless calls)."""

    role: Literal["system", "user", "assistant"]
    text: str

    def as_message(self) -> dict[str, str]:
        """The message as the model reads it."""
        return {"role": self.role, "content": self.text}


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """A message for the agent: from a user, or a system message aimed at a chat; `origin` says which source sent it."""

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
    server_id: str | None = None  # Discord guild, Slack team, Telegram chat: what persona routes match
    charge_to: str | None = None  # `channel:user id` billed for a system message (a cron job's creator)
    person: str | None = None  # the person (`identities`) the sender's account belongs to; set by the access policy
    origin: Origin = "user"
    reply_to: Quote | None = None  # the message this one answers or quotes
    context: tuple[GroupLine, ...] = ()  # group messages since the bot last spoke, brought by a mention
    edit_of: str | None = None  # the platform id of the user's message this edit replaces
    press: Press | None = None  # a button press; `text` holds the choice's label
    conversation: tuple[EarlierMessage, ...] = ()  # a client's own history: the turn reads it, not the session's
    awaited: bool = (
        False  # a caller waits for the outcome in its response (an API run): a failure is answered, not kept
    )
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """A message for a chat; `id` makes delivery at-most-once.

    `finalises` names the turn whose live (streamed) message this reply completes in place; a channel with no
    such live message, e.g. after a restart, sends it as a new message instead. `files` are local files to
    upload, with `text` as their caption. `choices` are buttons each adapter renders natively (inline keyboard,
    components, Block Kit), else as numbered lines; a press comes back as an inbound `Press` with `prompt_id`.
    `edit_of` is the platform id of a message of the bot's to replace in place (a decided prompt, a re-run answer);
    where it cannot be edited the text is sent anew. A message with `prompt_id` but no `choices` and no `edit_of`
    closes that prompt without a press (typed answer, timeout): adapters remember (bounded, in memory) which of their
    messages shows each prompt's buttons and replace it in place, buttons removed; unknown -> sent anew.
    `revises_reply_to` is the platform id of a user's message whose
    earlier reply this one replaces in place (an answer re-run after an edit); an adapter that no longer knows that
    reply sends this one anew. `private_to` names the one user a notice is for (shown only to
    them where the platform can, e.g. an ephemeral message).
    """

    chat: ChatRef
    text: str
    in_reply_to: str | None = None
    reply_to_platform_id: str | None = None
    kind: Literal["reply", "progress", "notice", "error"] = "reply"
    id: str = field(default_factory=new_id)
    finalises: str | None = None
    files: tuple[Attachment, ...] = ()
    choices: tuple[Choice, ...] = ()
    prompt_id: str | None = None
    edit_of: str | None = None
    revises_reply_to: str | None = None
    private_to: str | None = None


_RECORDS = (ChatRef, Attachment, Quote, GroupLine, Press, Choice, EarlierMessage, InboundMessage, OutboundMessage)
_FIELDS = {kind: (kind.__slots__, attrgetter(*kind.__slots__)) for kind in _RECORDS}
"""Each record's field names and one getter of all their values, in the same order."""
_LEAVES = frozenset({str, int, float, bool, type(None), Trust})


def _plain(value: Any) -> Any:
    """A message's fields as JSON-ready values: `dataclasses.asdict` without its per-leaf deep copies."""
    kind = type(value)
    if (fields := _FIELDS.get(kind)) is not None:
        pairs = zip(fields[0], fields[1](value), strict=True)
        return {name: item if item.__class__ in _LEAVES else _plain(item) for name, item in pairs}
    if kind is tuple or kind is list:
        return [_plain(item) for item in value]
    return value


def inbound_to_json(message: InboundMessage) -> str:
    """The message as one JSON object (journal rows, Redis stream entries)."""
    return dumps(_plain(message))


def inbound_from_json(text: str) -> InboundMessage:
    """The inverse of `inbound_to_json`."""
    data: dict[str, Any] = json.loads(text)
    data["chat"] = ChatRef(**data["chat"])
    data["trust"] = Trust(data["trust"])
    data["attachments"] = tuple(Attachment(**item) for item in data.get("attachments", ()))
    if quote := data.get("reply_to"):
        image = quote.get("image")
        data["reply_to"] = Quote(
            **{
                **quote,
                "trust": Trust(quote.get("trust", Trust.GUEST)),
                "image": Attachment(**image) if image else None,
            }
        )
    data["context"] = tuple(
        GroupLine(**{**line, "trust": Trust(line.get("trust", Trust.GUEST))}) for line in data.get("context", ())
    )
    if press := data.get("press"):
        data["press"] = Press(**press)
    data["conversation"] = tuple(EarlierMessage(**said) for said in data.get("conversation", ()))
    return InboundMessage(**data)


def outbound_to_json(message: OutboundMessage) -> str:
    """The message as one JSON object."""
    return dumps(_plain(message))


def outbound_from_json(text: str) -> OutboundMessage:
    """The inverse of `outbound_to_json`."""
    data: dict[str, Any] = json.loads(text)
    data["chat"] = ChatRef(**data["chat"])
    data["files"] = tuple(Attachment(**item) for item in data.get("files", ()))
    data["choices"] = tuple(Choice(**item) for item in data.get("choices", ()))
    return OutboundMessage(**data)
