from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.bus import ChatRef, OutboundMessage
from tests.fakes.slack_server import FakeSlack
from tests.support.adapter import AdapterUnderTest, slack_adapter

THREAD = ChatRef("slack", "C0GENERAL", "100.000001")
DM = ChatRef("slack", "D0001")


@pytest_asyncio.fixture
async def adapter(tmp_path: Path, slack: FakeSlack) -> AsyncIterator[AdapterUnderTest]:
    async with slack_adapter(slack, tmp_path / "media", streaming="auto") as running:
        yield running


async def test_reactions_say_seen_then_done_or_failed(adapter: AdapterUnderTest, slack: FakeSlack) -> None:
    await adapter.channel.react(THREAD, "C0GENERAL:100.000002", "seen")
    await adapter.channel.react(THREAD, "C0GENERAL:100.000003", "seen")
    assert slack.reactions[("C0GENERAL", "100.000002")] == ["eyes"]
    await adapter.channel.react(THREAD, "C0GENERAL:100.000002", "done")
    await adapter.channel.react(THREAD, "C0GENERAL:100.000003", "failed")
    assert slack.reactions[("C0GENERAL", "100.000002")] == ["white_check_mark"]
    assert slack.reactions[("C0GENERAL", "100.000003")] == ["x"]
    await adapter.channel.react(THREAD, "C0GENERAL:100.000004", "done")  # no eyes to take away
    assert slack.reactions[("C0GENERAL", "100.000004")] == ["white_check_mark"]
    await adapter.channel.react(THREAD, "C0GENERAL:command:7.trigger", "seen")  # a slash command: no message to mark
    assert not any(fields["channel"] != "C0GENERAL" for method, fields in slack.calls if method.startswith("reac"))


async def test_a_refused_reaction_is_not_an_error(adapter: AdapterUnderTest, slack: FakeSlack) -> None:
    slack.scopes = {"chat:write"}
    await adapter.channel.react(THREAD, "C0GENERAL:100.000002", "seen")
    assert slack.reactions == {}


async def test_thinking_status_shows_in_a_thread_once_until_the_bot_posts(
    adapter: AdapterUnderTest, slack: FakeSlack
) -> None:
    await adapter.channel.show_typing(THREAD)
    await adapter.channel.show_typing(THREAD)  # the manager refreshes every few seconds; Slack keeps it two minutes
    assert slack.statuses == [{"channel_id": "C0GENERAL", "thread_ts": "100.000001", "status": "is thinking…"}]
    await adapter.channel.send(OutboundMessage(THREAD, "done"))
    await adapter.channel.show_typing(THREAD)
    assert len(slack.statuses) == 2


async def test_in_a_dm_the_status_threads_under_the_message_being_answered(
    adapter: AdapterUnderTest, slack: FakeSlack
) -> None:
    await adapter.channel.show_typing(DM)
    assert slack.statuses == []  # nothing asked yet: no thread to show it in
    asked = slack.dm("hello", user="U0OWNER")
    await adapter.next()
    await adapter.channel.show_typing(DM)
    assert [(s["channel_id"], s["thread_ts"]) for s in slack.statuses] == [("D0001", asked["ts"])]


async def test_without_the_scope_the_status_is_tried_once(adapter: AdapterUnderTest, slack: FakeSlack) -> None:
    slack.scopes = {"reactions:write"}
    await adapter.channel.show_typing(THREAD)
    await adapter.channel.show_typing(ChatRef("slack", "C0GENERAL", "100.000009"))
    assert [m for m, _ in slack.calls].count("assistant.threads.setStatus") == 1 and slack.statuses == []


async def test_with_dm_replies_in_the_conversation_no_status_is_set_there(tmp_path: Path, slack: FakeSlack) -> None:
    async with slack_adapter(slack, tmp_path / "media", streaming="edit") as adapter:
        slack.dm("hello", user="U0OWNER")
        await adapter.next()
        await adapter.channel.show_typing(DM)
    assert slack.statuses == []


async def test_a_dm_reply_posted_in_the_conversation_clears_the_status_under_the_question(
    adapter: AdapterUnderTest, slack: FakeSlack
) -> None:
    asked = slack.dm("hello", user="U0OWNER")
    await adapter.next()
    await adapter.channel.show_typing(DM)
    await adapter.channel.send(OutboundMessage(DM, "hi"))  # short: posted at once, not streamed in the thread
    await adapter.channel.send(OutboundMessage(DM, "and more"))
    assert [(s["thread_ts"], s["status"]) for s in slack.statuses] == [
        (asked["ts"], "is thinking…"),
        (asked["ts"], ""),
    ]
