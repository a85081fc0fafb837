"""Intake: what a channel publishes is deduplicated, gated by access and rate limits, then put on the bus."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping

from bot.access.flood import RateLimit, Verdict, flood_notice
from bot.access.pairing import pairing_message
from bot.access.policy import AccessPolicy, Ignore, Overheard, Reply, SendPairingCode, Serve
from bot.bus import InboundMessage, MessageBus, OutboundMessage
from channels.abilities import dismisses
from channels.base import Publish
from channels.dedupe import RECENT_DELIVERIES, RECENT_DELIVERY_BYTES, SeenIds
from channels.gateway.group_context import GroupContext
from channels.gateway.supervisor import Slot, Spawn

logger = logging.getLogger(__name__)


class Intake:
    """The gate between the channels and the bus: one `publish` callable per channel, one decision per message."""

    def __init__(
        self,
        bus: MessageBus,
        slots: Mapping[str, Slot],
        spawn: Spawn,
        accepted: Callable[[str, InboundMessage], None],
        rate_limit: RateLimit | None = None,
        remembered: int = RECENT_DELIVERIES,
    ) -> None:
        """`accepted(channel, message)` hears of each message served; `remembered` bounds the ids kept for dedupe."""
        self.access: dict[str, AccessPolicy] = {}
        self.published: Counter[str] = Counter()
        self._bus = bus
        self._slots = slots
        self._spawn = spawn
        self._accepted = accepted
        self._rate_limit = rate_limit
        self._seen = SeenIds(remembered, RECENT_DELIVERY_BYTES)
        self._group_context = GroupContext()

    def publisher(self, name: str) -> Publish:
        """The `publish` callable for channel `name`: dedupe, then access, then the bus."""

        async def publish(message: InboundMessage) -> None:
            await self.admit(name, message)

        return publish

    async def admit(self, name: str, message: InboundMessage) -> None:
        """Decide on one message from channel `name`: serve it, answer it with a pairing code or a line, or drop it."""
        key = message.chat.session_key
        if message.platform_message_id and not self._seen.add(f"{key}/{message.platform_message_id}"):
            logger.info("[%s] duplicate delivery of %s ignored", key, message.platform_message_id)
            return
        policy = self.access.get(name)
        match policy.decide(message) if policy else Serve(message):
            case Serve(message=served):
                if not self._within_rate(name, served):
                    self._dismiss(name, message)
                    return
                await self._bus.publish_inbound(self._group_context.served(served))
                self.published[name] += 1
                self._accepted(name, served)
            case SendPairingCode(code=code, repeated=repeated):
                level = logging.INFO if repeated else logging.WARNING
                what = "sent again" if repeated else "issued"
                logger.log(level, "[%s] pairing code %s to %s (%s)", key, what, message.sender_id, message.sender_name)
                answer = OutboundMessage(
                    message.chat, pairing_message(name, code), reply_to_platform_id=message.platform_message_id
                )
                await self._bus.publish_outbound(answer)
            case Overheard(line=line, limit=limit, chars=chars):
                self._group_context.keep(message, line, limit, chars)
            case Reply(text=text):
                reply = OutboundMessage(message.chat, text, reply_to_platform_id=message.platform_message_id)
                await self._bus.publish_outbound(reply)
            case Ignore(reason=reason):
                logger.debug("[%s] ignored message from %s: %s", key, message.sender_id, reason)
                self._dismiss(name, message)

    def _dismiss(self, name: str, message: InboundMessage) -> None:
        """Tell the channel a message gets no answer, where it shows one coming (in the background)."""
        slot = self._slots.get(name)
        if slot is not None and dismisses(slot.channel) and message.platform_message_id:
            dismissed = slot.channel.dismiss(message.chat, message.platform_message_id)
            self._spawn(dismissed, f"dismiss:{message.chat.session_key}")

    def _within_rate(self, name: str, message: InboundMessage) -> bool:
        """Whether the sender is within `access.rate_limit`; past it the message is dropped before the model."""
        if self._rate_limit is None:
            return True
        verdict = self._rate_limit.check(message)
        if verdict is Verdict.PASS:
            return True
        if verdict is Verdict.DROP_AND_NOTIFY:
            logger.warning("[%s] %s is over the rate limit; dropping", message.chat.session_key, message.sender_id)
            notice = flood_notice(self._rate_limit.per_minute)
            # Not journaled: a flood notice lost in a crash needs no resend.
            self._slots[name].outbox.submit(OutboundMessage(message.chat, notice, kind="notice"))
        return False
