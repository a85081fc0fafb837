"""The latest owner DM: kept in Redis on the redis backend, so every process sees the one noted last."""

from __future__ import annotations

from bot.agent.owner_dm import RedisOwnerDM
from bot.bus import ChatRef, InboundMessage, Trust
from bot.cluster.redis import RedisState


def dm(channel: str, chat: str, trust: Trust = Trust.OWNER, direct: bool = True) -> InboundMessage:
    return InboundMessage(ChatRef(channel, chat), sender_id=chat, text="hi", trust=trust, is_direct=direct)


def test_an_owner_dm_noted_by_one_process_is_seen_by_another(redis_url: str) -> None:
    worker, leader = RedisOwnerDM(RedisState(redis_url)), RedisOwnerDM(RedisState(redis_url))
    assert leader.chat is None
    worker.note(dm("telegram", "42"))
    assert leader.chat == ChatRef("telegram", "42")
    leader.note(dm("discord", "7"))
    worker.note(dm("slack", "G1", direct=False))  # a group, a guest and the console never count
    worker.note(dm("telegram", "99", trust=Trust.GUEST))
    worker.note(dm("console", "local"))
    assert worker.chat == leader.chat == ChatRef("discord", "7")
    worker.note(dm("telegram", "42"))  # the same chat as before, noted again after another
    assert leader.chat == ChatRef("telegram", "42")
