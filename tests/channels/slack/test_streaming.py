"""Live replies on Slack, end to end: its streaming API in threads and DMs, chat.update where it is refused."""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.bus import ChatRef, OutboundMessage
from bot.events import Delivered
from channels.formatting import markdown_to_slack_mrkdwn
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.slack_server import FakeSlack
from tests.support.gateway import SLACK_OWNER as OWNER
from tests.support.gateway import SlackBot
from tests.support.harness import next_event

REPLY = "Here is **the answer** you asked for, streamed into Slack piece by piece as it is written."


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack) -> AsyncIterator[SlackBot]:
    async with SlackBot(tmp_path, fake_llm, slack, streaming="auto", stream_interval="40ms") as running:
        yield running


async def answered(bot: SlackBot, fake_llm: FakeLLM, send: object) -> None:
    done = asyncio.create_task(next_event(bot.gateway.agent.events, Delivered))
    fake_llm.script(Text(REPLY, chunk_delay=0.02))
    send()
    await done


async def test_thread_reply_streams_through_slacks_streaming_api(
    bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    await answered(bot, fake_llm, lambda: slack.channel_message("explain", user=OWNER, mention=True))
    ((ts, stream),) = slack.streams.items()
    assert stream["state"] == "stopped" and stream["text"] == REPLY
    assert len(stream["appends"]) >= 2
    start = next(fields for method, fields in slack.calls if method == "chat.startStream")
    assert start["recipient_user_id"] == OWNER and start["recipient_team_id"] == slack.team_id
    assert slack.posted == [] and slack.updates == []


async def test_dm_streams_as_a_reply_to_the_message(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    asked = {}
    await answered(bot, fake_llm, lambda: asked.update(slack.dm("explain", user=OWNER)))
    ((ts, stream),) = slack.streams.items()
    assert stream["thread_ts"] == asked["ts"] and stream["text"] == REPLY and stream["state"] == "stopped"
    assert slack.posted == []


async def test_refused_stream_falls_back_to_an_edited_message(
    bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    slack.fail("chat.startStream", status=200, error="not_allowed_token_type")
    await answered(bot, fake_llm, lambda: slack.channel_message("explain", user=OWNER, mention=True))
    (posted,) = slack.posted
    assert len(slack.updates) >= 2 and all(update["ts"] == posted["ts"] for update in slack.updates)
    assert slack.updates[-1]["text"] == markdown_to_slack_mrkdwn(REPLY)
    assert slack.streams == {}


async def test_rate_limited_append_waits_as_told(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    slack.fail("chat.appendStream", retry_after=2)
    await answered(bot, fake_llm, lambda: slack.channel_message("explain", user=OWNER, mention=True))
    assert 2 in bot.sleep.waits
    ((ts, stream),) = slack.streams.items()
    assert stream["text"] == REPLY and stream["state"] == "stopped"


async def test_a_revised_answer_replaces_the_streamed_reply(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    asked = {}
    await answered(bot, fake_llm, lambda: asked.update(slack.dm("explain", user=OWNER)))
    ((ts, stream),) = slack.streams.items()
    revised = OutboundMessage(ChatRef("slack", "D0001"), "A **better** answer", revises_reply_to=f"D0001:{asked['ts']}")
    await bot.gateway.agent.bus.publish_outbound(revised)
    await slack.wait_until(lambda: bool(slack.updates), 5, lambda: "no chat.update yet")
    assert (slack.updates[-1]["ts"], slack.updates[-1]["text"]) == (ts, "A *better* answer")
    assert slack.posted == []
