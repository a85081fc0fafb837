"""Live replies on every platform that edits: one message, edited in place as the reply grows, ending on its text;
where the platform cannot edit, one message with the whole reply."""

import asyncio
from pathlib import Path

from bot.events import Delivered
from tests.channels.contract.gateways import gateway
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.harness import next_event
from tests.support.platform import Platform

REPLY = "Here is the answer you asked for, written slowly so that it streams in many small pieces."


async def test_a_reply_grows_in_one_message_edited_in_place(
    tmp_path: Path, fake_llm: FakeLLM, platform: Platform
) -> None:
    live = {"streaming": "edit", "stream_interval": "40ms"}
    async with gateway(tmp_path, fake_llm, platform, live) as bot:
        await bot.gateway.manager.ready(platform.name)
        fake_llm.script(Text(REPLY, chunk_delay=platform.stream_chunk_delay))
        delivered = asyncio.create_task(next_event(bot.gateway.agent.events, Delivered))
        if platform.has_groups:
            platform.group("explain", platform.owner, True)
        else:
            platform.dm("explain", platform.owner)
        await delivered
    if not platform.can_edit:  # declared: a sent message cannot change, so the live reply goes out whole, once
        assert platform.sent() == [REPLY] and platform.edits() == []
        return
    (posted,) = platform.sent_ids()
    edits = platform.edits()
    assert len(edits) >= 2 and {message for message, _ in edits} == {posted}
    assert all(REPLY.startswith(text) for _, text in edits)
    assert edits[-1][1] == REPLY
