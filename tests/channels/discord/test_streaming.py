"""Live replies on Discord, end to end: one message edited as the reply grows, fences balanced throughout."""

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.bus import ChatRef, OutboundMessage
from bot.events import Delivered
from tests.fakes.discord_server import TEXT_LIMIT, FakeDiscord
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.adapter import discord_adapter
from tests.support.gateway import OWNER, DiscordBot
from tests.support.harness import next_event

REPLY = "Here is the code:\n\n```python\n" + "\n".join(f"value_{i} = {i}" for i in range(12)) + "\n```\n\nThat's all."


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord) -> AsyncIterator[DiscordBot]:
    async with DiscordBot(tmp_path, fake_llm, discord, {"stream_interval": "40ms"}) as running:
        await running.gateway.manager.ready("discord")
        yield running


def fences_balanced(text: str) -> bool:
    return len(re.findall(r"^\s*```", text, re.MULTILINE)) % 2 == 0


async def test_reply_is_edited_in_place_with_balanced_fences(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    fake_llm.script(Text(REPLY, chunk_delay=0.015))
    done = asyncio.create_task(next_event(bot.gateway.agent.events, Delivered))
    asked = discord.guild_message("show me code", user_id=OWNER, mention_bot=True)
    await done
    (posted,) = discord.sent
    assert posted["message_reference"]["message_id"] == int(asked["id"])
    assert len(discord.edits) >= 2 and all(edit["id"] == posted["id"] for edit in discord.edits)
    assert all(fences_balanced(call["content"]) for call in [posted, *discord.edits])
    assert discord.edits[-1]["content"] == REPLY
    settled = len(discord.edits)
    fake_llm.script(Text(REPLY, chunk_delay=0.015))  # a whole streamed turn more: an edit still due would come by now
    done = asyncio.create_task(next_event(bot.gateway.agent.events, Delivered))
    discord.guild_message("and again", user_id=OWNER, mention_bot=True)
    await done
    assert len([edit for edit in discord.edits if edit["id"] == posted["id"]]) == settled and len(discord.sent) == 2


async def test_long_reply_continues_in_a_second_message(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    reply = "\n\n".join(f"Part {i}: " + "some words here. " * 30 for i in range(6))
    assert len(reply) > TEXT_LIMIT
    fake_llm.script(Text(reply, chunk_delay=0.001))
    done = asyncio.create_task(next_event(bot.gateway.agent.events, Delivered))
    discord.dm("write a lot", user_id=OWNER)
    await done
    assert len(discord.sent) == 2
    final = {call["id"]: call["content"] for call in [*discord.sent, *discord.edits]}
    assert all(len(text) <= TEXT_LIMIT for text in final.values())
    joined = "\n\n".join(final[call["id"]] for call in discord.sent)
    assert " ".join(joined.split()) == " ".join(reply.split())


async def test_rate_limited_edit_is_retried_and_the_reply_completes(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    discord.fail("edit_message", retry_after=0.05)
    fake_llm.script(Text(REPLY, chunk_delay=0.015))
    done = asyncio.create_task(next_event(bot.gateway.agent.events, Delivered))
    discord.guild_message("show me code", user_id=OWNER, mention_bot=True)
    await done
    assert ("PATCH", f"channels/{discord.channel_id}/messages/{discord.sent[0]['id']}") in discord.calls
    assert discord.edits[-1]["content"] == REPLY and len(discord.sent) == 1


async def test_a_revised_answer_replaces_the_live_reply_in_place(tmp_path: Path, discord: FakeDiscord) -> None:
    async with discord_adapter(discord, tmp_path, stream_interval="40ms") as adapter:
        asked = discord.guild_message("show me code", user_id=OWNER, mention_bot=True)
        await adapter.next()
        chat = ChatRef("discord", str(discord.channel_id))
        live = adapter.channel.live_reply(chat, asked["id"], None)
        assert live is not None
        live.call_started()
        live.add(REPLY)
        assert await live.finish(OutboundMessage(chat, REPLY))
        (posted,) = discord.sent
        await adapter.channel.send(OutboundMessage(chat, "Shorter now.", revises_reply_to=asked["id"]))
    assert discord.edits[-1]["id"] == posted["id"] and discord.edits[-1]["content"] == "Shorter now."
    assert len(discord.sent) == 1
