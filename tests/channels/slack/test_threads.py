from pathlib import Path

from bot.bus import ChatRef, GroupLine, OutboundMessage, Quote
from channels.slack.threads import CONTEXT_MESSAGES, thread_start
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.slack_server import FakeSlack
from tests.support.adapter import slack_adapter
from tests.support.gateway import SLACK_OWNER as OWNER
from tests.support.gateway import SlackBot

CHANNEL = "C0GENERAL"
BOT = "UBOT"


def line(ts: str, text: str, user: str = "U1") -> dict:
    return {"type": "message", "user": user, "text": text, "ts": ts, "thread_ts": "1.0", "channel": CHANNEL}


def test_the_parent_is_the_quote_and_earlier_replies_the_context() -> None:
    messages = [line("3.0", "second"), line("1.0", "the plan <@UBOT>", user=BOT), line("2.0", "first", "U2")]
    start = thread_start([*messages, line("4.0", "<@UBOT> thoughts?")], "1.0", "4.0", BOT, {"U2": "Bea"})
    assert start.parent == Quote("the plan", BOT, None, from_bot=True, platform_message_id=f"{CHANNEL}:1.0")
    assert start.earlier == (GroupLine("U2", "Bea", "first", 2.0), GroupLine("U1", None, "second", 3.0))


def test_the_context_is_bounded_to_the_latest_replies() -> None:
    replies = [line(f"{i}.0", f"reply {i}") for i in range(2, 40)]
    start = thread_start([line("1.0", "x" * 3000), *replies], "1.0", "40.0", BOT, {})
    assert len(start.parent.text) == 1000 and start.parent.text.endswith("…")
    assert [g.text for g in start.earlier] == [f"reply {i}" for i in range(40 - CONTEXT_MESSAGES, 40)]
    long = [line(f"{i}.0", "y" * 1500) for i in range(2, 6)]
    assert len(thread_start(long, "1.0", "9.0", BOT, {}).earlier) == 2  # 4,000 characters at most


async def test_first_mention_in_an_unseen_thread_brings_its_parent_and_replies(
    tmp_path: Path, slack: FakeSlack
) -> None:
    slack.users.update({"U0BEA": "Bea Smith", OWNER: "Olive Owner"})
    parent = slack.channel_message("shall we ship friday?", channel=CHANNEL, user="U0BEA")
    slack.message_while_offline("I think so", user=OWNER, channel=CHANNEL, thread_ts=parent["ts"])
    async with slack_adapter(slack, tmp_path / "media") as bot:
        await bot.next()  # the parent, not mentioning the bot
        slack.channel_message("what do you say?", channel=CHANNEL, user=OWNER, thread_ts=parent["ts"], mention=True)
        mention, twin = await bot.next(), await bot.next()  # app_mention and message of one post
        slack.channel_message("and now?", channel=CHANNEL, user=OWNER, thread_ts=parent["ts"], mention=True)
        later = await bot.next()
    assert mention.reply_to == Quote(
        "shall we ship friday?", "U0BEA", "Bea", platform_message_id=f"{CHANNEL}:{parent['ts']}"
    )
    assert [(g.sender_name, g.text) for g in mention.context] == [("Olive", "I think so")]
    assert (twin.reply_to, twin.context) == (mention.reply_to, mention.context)
    assert (later.reply_to, later.context) == (None, ())
    assert [m for m, _ in slack.calls].count("conversations.replies") == 1


async def test_a_thread_the_bot_answered_in_is_not_read_again(tmp_path: Path, slack: FakeSlack) -> None:
    parent = slack.channel_message("question", channel=CHANNEL, user=OWNER, mention=True)
    async with slack_adapter(slack, tmp_path / "media") as bot:
        await bot.next()
        await bot.channel.send(OutboundMessage(ChatRef("slack", CHANNEL, parent["ts"]), "answer"))
        slack.channel_message("more", channel=CHANNEL, user=OWNER, thread_ts=parent["ts"], mention=True)
        follow_up = (await bot.next(), await bot.next())
    assert all(m.reply_to is None and m.context == () for m in follow_up)
    assert "conversations.replies" not in [m for m, _ in slack.calls]


async def test_threads_the_bot_answered_in_are_followed_after_a_restart(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    fake_llm.script(Text("first"), Text("still here"))
    async with SlackBot(tmp_path, fake_llm, slack):
        asked = slack.channel_message("start", channel=CHANNEL, user=OWNER, mention=True)
        await slack.wait_for_posted(1)
    async with SlackBot(tmp_path, fake_llm, slack):
        slack.channel_message("no mention needed?", channel=CHANNEL, user=OWNER, thread_ts=asked["ts"])
        posted = await slack.wait_for_posted(2)
    assert posted[1]["thread_ts"] == asked["ts"] and posted[1]["text"] == "still here"
    assert len(fake_llm.requests) == 2


async def test_an_image_in_the_thread_parent_comes_with_the_quote(tmp_path: Path, slack: FakeSlack) -> None:
    parent = slack.file_share(b"\x89PNG chart", "chart.png", "image/png", text="the chart", channel=CHANNEL)
    async with slack_adapter(slack, tmp_path / "media") as bot:
        await bot.next()
        slack.channel_message("what does it show?", channel=CHANNEL, user=OWNER, thread_ts=parent["ts"], mention=True)
        mention = await bot.next()
    image = mention.reply_to.image
    assert mention.reply_to.text == "the chart" and image.kind == "image" and image.mime_type == "image/png"
    assert Path(image.path).read_bytes() == b"\x89PNG chart"
