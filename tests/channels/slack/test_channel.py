import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot.access.pairing import PairingBook
from bot.bus import InboundMessage
from bot.config.channels.slack import SlackConfig
from channels.slack.channel import SlackChannel
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.slack_server import FakeSlack
from tests.support.gateway import SLACK_OWNER as OWNER
from tests.support.gateway import SlackBot, slack_section
from tests.support.polling import until

STRANGER = "U0STRANGER"
CHANNEL = "C0GENERAL"


def last_user_text(fake_llm: FakeLLM, index: int = -1) -> str:
    content = fake_llm.requests[index]["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


async def test_owner_dm_gets_the_model_reply_in_mrkdwn(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    fake_llm.script(Text("Hello **owner**, see [docs](https://example.com)"))
    slack.dm("hi there", user=OWNER)
    (posted,) = await slack.wait_for_posted(1)
    assert posted["channel"] == "D0001" and "thread_ts" not in posted
    assert posted["text"] == "Hello *owner*, see <https://example.com|docs>"
    assert last_user_text(fake_llm).endswith("hi there")
    assert "Olive" in last_user_text(fake_llm)  # the sender's name, from users.info


async def test_unknown_sender_pairs_before_being_served(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    slack.dm("hello?", user=STRANGER, channel="D0002")
    (posted,) = await slack.wait_for_posted(1)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", posted["text"]).group(1)
    assert f"relaybot pairing approve slack {code}" in posted["text"]
    slack.dm("still there?", user=STRANGER, channel="D0002")
    assert (await slack.wait_for_posted(2))[1]["text"] == posted["text"]
    slack.dm("barrier", user=OWNER)
    await slack.wait_for_posted(3)
    assert len(fake_llm.requests) == 1 and last_user_text(fake_llm).endswith("barrier")
    assert PairingBook(bot.config.state_dir / "pairing.json").approve("slack", code) == STRANGER
    slack.dm("now?", user=STRANGER, channel="D0002")
    posted = await slack.wait_for_posted(4)
    assert posted[3]["channel"] == "D0002" and posted[3]["text"].endswith("now?")


async def test_channel_mention_is_answered_once_in_its_thread(
    bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    slack.channel_message("just chatting", channel=CHANNEL, user=OWNER)
    asked = slack.channel_message("what time is it?", channel=CHANNEL, user=OWNER, mention=True)
    (posted,) = await slack.wait_for_posted(1)
    assert (posted["channel"], posted["thread_ts"]) == (CHANNEL, asked["ts"])
    assert last_user_text(fake_llm).endswith("what time is it?") and "<@" not in last_user_text(fake_llm)
    slack.channel_message("and the date?", channel=CHANNEL, user=OWNER, thread_ts=asked["ts"])  # no mention needed
    posted = await slack.wait_for_posted(2)
    assert posted[1]["thread_ts"] == asked["ts"]
    assert len(fake_llm.requests) == 2  # app_mention + message of the same ts went to the model once
    assert "and the date?" in str(fake_llm.requests[1]["messages"]) and "what time" in str(
        fake_llm.requests[1]["messages"]
    )


async def test_without_reply_in_thread_the_answer_goes_to_the_channel(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    async with SlackBot(tmp_path, fake_llm, slack, reply_in_thread=False):
        slack.channel_message("hello", channel=CHANNEL, user=OWNER, mention=True)
        (posted,) = await slack.wait_for_posted(1)
    assert posted["channel"] == CHANNEL and "thread_ts" not in posted


async def test_long_reply_is_split_with_code_blocks_intact(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(120)) + "\n```"
    prose = "\n\n".join(("Some words about the code. " * 12).strip() for _ in range(14))
    fake_llm.script(Text((prose + "\n\n" + code + "\n\n" + prose)[:9000]))
    slack.dm("explain", user=OWNER)
    await slack.wait_for_posted(3)
    await slack.wait_for_acks(4)  # the three posts echoed back, and ignored
    assert len(slack.posted) == 3 and all(len(p["text"]) <= 4000 for p in slack.posted)
    assert all(p["text"].count("```") % 2 == 0 for p in slack.posted)
    assert len(fake_llm.requests) == 1


async def test_rate_limit_is_honoured_and_posts_once(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    slack.fail("chat.postMessage", status=429, retry_after=3)
    slack.fail("chat.postMessage", status=503)
    slack.dm("first", user=OWNER)
    (posted,) = await slack.wait_for_posted(1)
    assert posted["text"].endswith("first") and len(slack.posted) == 1
    assert bot.sleep.waits[0] == 3.0 and len(bot.sleep.waits) == 2
    assert sum(1 for method, _ in slack.calls if method == "chat.postMessage") == 3


async def test_connection_reset_is_retried_by_us_alone(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    slack.fail("chat.postMessage", status=0)
    slack.dm("hello", user=OWNER)
    (posted,) = await slack.wait_for_posted(1)
    assert sum(1 for method, _ in slack.calls if method == "chat.postMessage") == 2  # the SDK did not retry too
    assert bot.sleep.waits == []  # the outbox retries a reset at once


async def test_refresh_mid_conversation_loses_nothing_and_doubles_nothing(
    bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    slack.dm("before", user=OWNER)
    await slack.wait_for_posted(1)
    await slack.refresh()
    slack.dm("during", user=OWNER)  # queued by Slack until the new connection is up
    await slack.wait_for_connections(2)
    await slack.drop()
    slack.dm("after", user=OWNER)
    await slack.wait_for_connections(3)
    posted = await slack.wait_for_posted(3)
    assert [p["text"].splitlines()[-1] for p in posted] == ["before", "during", "after"]
    assert slack.calls.count(("apps.connections.open", {})) == 3
    assert await slack.retry_unacked() == 0


async def test_shared_image_reaches_the_model(bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    slack.file_share(b"\x89PNG fake image", "shot.png", "image/png", text="what is this?", user=OWNER)
    await slack.wait_for_posted(1)
    slack.file_share(b"%PDF-1.4", "report.pdf", "application/pdf", user=OWNER)
    await slack.wait_for_posted(2)
    content = fake_llm.requests[0]["messages"][-1]["content"]
    assert "what is this?" in content[0]["text"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "report.pdf" not in last_user_text(fake_llm, 0) and "report.pdf (application/pdf)" in last_user_text(
        fake_llm, 1
    )
    assert sorted(p.name for p in (bot.config.workspace / "inbox" / "slack" / "D0001").iterdir()) == [
        "F0001.png",
        "F0002.pdf",
    ]


async def test_refused_token_fails_start_until_fixed(tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    slack.fail("auth.test", status=200, error="invalid_auth", times=2)
    slack.fail("apps.connections.open", status=200, error="invalid_auth")
    slack.dm("are you up?", user=OWNER)  # Slack keeps it until the app connects
    async with SlackBot(tmp_path, fake_llm, slack):
        (posted,) = await slack.wait_for_posted(1)
    assert posted["text"].endswith("are you up?")
    opened = [method for method, _ in slack.calls if method == "apps.connections.open"]
    assert len(opened) == 2 and slack.connections == 1


async def test_abrupt_drop_is_noticed_by_ping_and_recovers(tmp_path: Path, slack: FakeSlack) -> None:
    received: asyncio.Queue[InboundMessage] = asyncio.Queue()
    config = SlackConfig.model_validate(slack_section(slack))
    channel = SlackChannel(received.put, config, tmp_path, ping_interval=0.1)
    await channel.start()
    try:
        await slack.drop(abrupt=True)
        slack.dm("still there?", user=OWNER)
        message = await asyncio.wait_for(received.get(), 5)
    finally:
        await channel.stop()
    assert (message.text, message.sender_name) == ("still there?", "Olive")
    assert slack.connections == 2


async def test_bot_token_is_only_sent_to_slack(tmp_path: Path, slack: FakeSlack) -> None:
    received: asyncio.Queue[InboundMessage] = asyncio.Queue()
    channel = SlackChannel(received.put, SlackConfig.model_validate(slack_section(slack)), tmp_path)
    await channel.start()
    try:
        file = {"id": "F9", "name": "x.png", "mimetype": "image/png", "url_private": "https://files.example.net/x.png"}
        slack.dm("look", user=OWNER, subtype="file_share", files=[file])
        message = await asyncio.wait_for(received.get(), 5)
    finally:
        await channel.stop()
    assert message.attachments == () and message.text == "look\n[an image was sent but could not be downloaded]"


async def test_an_event_is_acked_only_once_it_is_journaled(
    bot: SlackBot, fake_llm: FakeLLM, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    bot.gateway.agent.bus.close_intake()  # as during a stop: the journal refuses the message
    slack.dm("during shutdown", user=OWNER)
    await until(lambda: "the bot is stopping; the message was not accepted" in caplog.text, 10)  # bolt's listener log
    assert slack.acks == [] and fake_llm.requests == []
    assert await slack.retry_unacked() == 1  # Slack keeps it and delivers it again


async def barrier(slack: FakeSlack, **where: Any) -> None:
    """The owner writes once more (a DM, or where `where` says) and is answered: whatever catch-up put in that
    conversation before was answered first."""
    posted = len(slack.posted)
    if where:
        slack.channel_message("barrier", user=OWNER, **where)
    else:
        slack.dm("barrier", user=OWNER)
    await slack.wait_for_posted(posted + 1)
    assert len(slack.posted) == posted + 1 and slack.posted[-1]["text"].endswith("barrier")


async def test_messages_sent_while_the_bot_was_down_are_answered_once_after_start(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    fake_llm.script(Text("first"), Text("in thread"))
    async with SlackBot(tmp_path, fake_llm, slack):
        slack.dm("hello", user=OWNER)
        started = slack.channel_message("look", channel=CHANNEL, user=OWNER, mention=True)
        await slack.wait_for_posted(1)
        slack.channel_message("and this", channel=CHANNEL, user=OWNER, mention=True, thread_ts=started["ts"])
        await slack.wait_for_posted(3)
    slack.message_while_offline("while you were away", user=OWNER)
    slack.message_while_offline("thread reply meanwhile", user=OWNER, channel=CHANNEL, thread_ts=started["ts"])
    fake_llm.script(Text("caught up"), Text("caught up in thread"))
    async with SlackBot(tmp_path, fake_llm, slack):
        posted = await slack.wait_for_posted(5)
        await barrier(slack, channel=CHANNEL, mention=True, thread_ts=started["ts"])
        await barrier(slack)
    assert len(fake_llm.requests) == 7
    texts = {last_user_text(fake_llm, -3), last_user_text(fake_llm, -4)}  # before the two barriers
    assert any(t.endswith("while you were away") for t in texts)
    assert any(t.endswith("thread reply meanwhile") for t in texts)
    assert {p["channel"] for p in posted[3:]} == {"D0001", CHANNEL}


async def test_catch_up_skips_a_slack_message_already_journaled(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    fake_llm.script(Text("first"))
    async with SlackBot(tmp_path, fake_llm, slack):
        slack.dm("hello", user=OWNER)
        await slack.wait_for_posted(1)
    active = tmp_path / "state" / "catchup" / "slack.json"
    rows = json.loads(active.read_text())
    active.write_text(json.dumps([{**row, "last_id": "0"} for row in rows]))
    async with SlackBot(tmp_path, fake_llm, slack):
        await slack.wait_for_call("conversations.history")
        await barrier(slack)
    assert len(fake_llm.requests) == 2  # the first exchange and the barrier: the journaled message is not run again
