"""Room invites: joined when the inviter may talk to the bot, otherwise declined with the reason (a pairing code)."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import quote

from bot.errors import ChannelError
from channels.abilities import InviteVerdict
from channels.matrix.calls import call_matrix
from channels.matrix.parse import Me, inviter_of

logger = logging.getLogger(__name__)

DECLINED = "relaybot only joins rooms of people its owner has approved."


def allowlist_verdict(allowed: frozenset[str]) -> InviteVerdict:
    """Until the access policy is wired in: join invites from `allow_from` senders only."""

    def verdict(inviter: str, name: str | None) -> str | None:
        return None if inviter in allowed else DECLINED

    return verdict


class InviteGate:
    """Decides each pending invite once per sync that brings it: join, or leave with the verdict as the reason."""

    def __init__(self, client: Any, me: Me, verdict: InviteVerdict) -> None:
        self._client = client
        self._me = me
        self.verdict = verdict

    async def decide(self, room_id: str, invite_state: list[Any]) -> None:
        """Join or decline `room_id`; a failure is logged, and the invite comes again with the next sync."""
        inviter = inviter_of(invite_state, self._me)
        if inviter is None:
            logger.info("matrix: invite to %s names no inviter; declined", room_id)
            reason: str | None = DECLINED
        else:
            reason = self.verdict(*inviter)
        try:
            if reason is None:
                await call_matrix(lambda: self._client.join(room_id))
                logger.info("[matrix:%s] joined on the invite of %s", room_id, inviter[0] if inviter else "?")
            else:
                await self._decline(room_id, reason)
                logger.info("[matrix:%s] declined the invite of %s", room_id, inviter[0] if inviter else "?")
        except ChannelError as exc:
            logger.warning("[matrix:%s] could not answer the invite: %s", room_id, exc)

    async def _decline(self, room_id: str, reason: str) -> None:
        """POST /rooms/{id}/leave with a reason, which the inviter's client shows (nio's room_leave takes none)."""
        from nio import RoomLeaveResponse

        path = f"/_matrix/client/v3/rooms/{quote(room_id, safe='')}/leave"
        body = json.dumps({"reason": reason})
        await call_matrix(lambda: self._client._send(RoomLeaveResponse, "POST", path, body))
