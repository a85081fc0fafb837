"""Whom a channel that is invited into rooms (Matrix) joins: the channel's access policy, asked as for a DM."""

from __future__ import annotations

from collections.abc import Callable

from bot.access.pairing import pairing_message
from bot.access.policy import AccessPolicy, Ignore, SendPairingCode
from bot.bus import ChatRef, InboundMessage
from channels.abilities import InviteVerdict

NOT_ALLOWED = "I only join rooms of people my owner has approved."


def invite_verdict(channel: str, policy: Callable[[], AccessPolicy | None]) -> InviteVerdict:
    """Join for a sender the policy serves; decline a stranger with their pairing code, or when pairing is off."""

    def verdict(inviter: str, name: str | None) -> str | None:
        current = policy()
        if current is None:
            return NOT_ALLOWED
        knock = InboundMessage(ChatRef(channel, "invite"), inviter, "", sender_name=name, is_direct=True)
        decision = current.decide(knock)
        if isinstance(decision, SendPairingCode):
            return pairing_message(channel, decision.code)
        if isinstance(decision, Ignore):
            return NOT_ALLOWED
        return None

    return verdict
