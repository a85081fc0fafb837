"""The bus between channels and the agent: messages, the MessageBus contract, the local (SQLite) bus."""

from bot.bus.contract import BusStats, MessageBus
from bot.bus.local import LocalBus
from bot.bus.messages import Attachment, ChatRef, InboundMessage, OutboundMessage, Trust, new_id

__all__ = [
    "Attachment",
    "BusStats",
    "ChatRef",
    "InboundMessage",
    "LocalBus",
    "MessageBus",
    "OutboundMessage",
    "Trust",
    "new_id",
]
