from pathlib import Path

from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.slack_server import FakeSlack
from tests.support.adapter import slack_adapter
from tests.support.gateway import SLACK_OWNER as OWNER
from tests.support.gateway import SlackBot

CHANNEL = "C0GENERAL"


async def test_a_slash_command_is_acked_at_once_and_runs_as_the_command(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    async with SlackBot(tmp_path, fake_llm, slack):
        slack.slash_command("/new", user=OWNER)
        (posted,) = await slack.wait_for_posted(1)
    assert posted["channel"] == "D0001" and posted["text"] == "Started a new conversation."
    (envelope,) = slack.envelopes_of("slash_commands")
    assert envelope.acked and envelope.ack_delay < 3.0 and envelope.ack_payload is None
    assert fake_llm.requests == []


async def test_a_renamed_command_arrives_under_its_relaybot_name(tmp_path: Path, slack: FakeSlack) -> None:
    async with slack_adapter(slack, tmp_path / "media") as bot:
        slack.slash_command("/relaybot-status", "now", user=OWNER, channel=CHANNEL)
        message = await bot.next()
    assert (message.text, message.chat.session_key, message.is_direct) == ("/status now", f"slack:{CHANNEL}", False)


async def test_an_edit_arrives_as_an_edit_of_the_original(tmp_path: Path, slack: FakeSlack) -> None:
    async with slack_adapter(slack, tmp_path / "media") as bot:
        original = slack.dm("what is 2+3?", user=OWNER)
        first = await bot.next()
        slack.edit(original, "what is 2+4?")
        edit = await bot.next()
    assert first.edit_of is None and edit.edit_of == first.platform_message_id == f"D0001:{original['ts']}"
    assert edit.text == "what is 2+4?" and edit.platform_message_id.startswith(f"{first.platform_message_id}@")
    assert edit.sender_name == "Olive" and edit.chat == first.chat


async def test_channel_messages_without_a_mention_are_published_as_not_mentioned(
    tmp_path: Path, slack: FakeSlack
) -> None:
    async with slack_adapter(slack, tmp_path / "media") as bot:
        slack.channel_message("lunch at noon", channel=CHANNEL, user=OWNER)
        chatter = await bot.next()
        slack.channel_message("what did I say?", channel=CHANNEL, user=OWNER, mention=True)
        mention = await bot.next()
    assert (chatter.text, chatter.mentioned, chatter.is_direct) == ("lunch at noon", False, False)
    assert chatter.sender_name == "Olive" and mention.mentioned


async def test_several_files_in_one_message_are_one_turn(tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    fake_llm.script(Text("two pictures"))
    files = [slack.add_file(b"\x89PNG one", "a.png", "image/png"), slack.add_file(b"\x89PNG two", "b.png", "image/png")]
    async with SlackBot(tmp_path, fake_llm, slack):
        slack.dm("compare these", user=OWNER, subtype="file_share", files=files)
        await slack.wait_for_posted(1)
    (request,) = fake_llm.requests
    content = request["messages"][-1]["content"]
    assert "compare these" in content[0]["text"]
    assert [part["type"] for part in content[1:]] == ["image_url", "image_url"]
