"""The bus between channels and the agent: messages, the MessageBus contract, the local (SQLite) bus."""

from bot.bus.contract import BusStats, MessageBus
from bot.bus.local import LocalBus
from bot.bus.messages import (
    TRUST_ORDER,
    AboutChat,
    Attachment,
    ChatRef,
    Choice,
    EarlierMessage,
    GroupLine,
    InboundMessage,
    OutboundMessage,
    Press,
    Quote,
    Trust,
    lowest_trust,
    new_id,
)

__all__ = [
    "AboutChat",
    "TRUST_ORDER",
    "Attachment",
    "BusStats",
    "ChatRef",
    "Choice",
    "EarlierMessage",
    "GroupLine",
    "InboundMessage",
    "LocalBus",
    "MessageBus",
    "OutboundMessage",
    "Press",
    "Quote",
    "Trust",
    "lowest_trust",
    "new_id",
]
