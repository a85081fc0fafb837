import json
import logging
import re
from pathlib import Path

import pytest

from bot.access.pairing import PairingBook
from bot.bus import InboundMessage
from bot.commands.catalogue import CommandSpec
from bot.config.channels.discord import DiscordConfig
from bot.errors import ChannelError
from channels.abilities import OffersCommands, Reacts
from channels.discord.channel import DiscordChannel
from tests.fakes.discord_server import TEXT_LIMIT, FakeDiscord
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.adapter import discord_adapter
from tests.support.gateway import OWNER, DiscordBot

STRANGER = 77


def last_user_text(fake_llm: FakeLLM) -> str:
    content = fake_llm.requests[-1]["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


async def test_owner_dm_gets_the_model_reply(bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord) -> None:
    fake_llm.script(Text("Hello **owner**"))
    message = discord.dm("hi there", user_id=OWNER)
    (sent,) = await discord.wait_for_sent(1)
    assert sent["channel_id"] == int(message["channel_id"]) and sent["content"] == "Hello **owner**"
    assert sent["message_reference"]["message_id"] == int(message["id"])
    assert last_user_text(fake_llm).endswith("hi there")


async def test_unknown_sender_pairs_before_being_served(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    discord.dm("hello?", user_id=STRANGER)
    (sent,) = await discord.wait_for_sent(1)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", sent["content"]).group(1)
    assert f"relaybot pairing approve discord {code}" in sent["content"]
    discord.dm("still there?", user_id=STRANGER)
    assert (await discord.wait_for_sent(2))[1]["content"] == sent["content"]
    discord.dm("barrier", user_id=OWNER)
    await discord.wait_for_sent(3)
    assert len(fake_llm.requests) == 1 and last_user_text(fake_llm).endswith("barrier")
    assert PairingBook(bot.config.state_dir / "pairing.json").approve("discord", code) == str(STRANGER)
    discord.dm("now?", user_id=STRANGER)
    replies = await discord.wait_for_sent(4)
    assert replies[3]["channel_id"] == sent["channel_id"] and replies[3]["content"].endswith("now?")


async def test_guild_message_needs_a_mention_and_the_reply_references_it(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    discord.guild_message("just chatting", user_id=OWNER)
    asked = discord.guild_message("what time is it?", user_id=OWNER, mention_bot=True)
    (sent,) = await discord.wait_for_sent(1)
    assert len(fake_llm.requests) == 1 and last_user_text(fake_llm).endswith("\nwhat time is it?")
    assert sent["channel_id"] == discord.channel_id
    assert sent["message_reference"]["message_id"] == int(asked["id"])


async def test_a_reply_to_the_bot_counts_as_a_mention(bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord) -> None:
    discord.guild_message("hello", user_id=OWNER, mention_bot=True)
    (answer,) = await discord.wait_for_sent(1)
    discord.guild_message("and tomorrow?", user_id=OWNER, reply_to=answer)
    await discord.wait_for_sent(2)
    assert last_user_text(fake_llm).endswith("and tomorrow?")


async def test_a_thread_is_answered_in_the_thread_as_its_own_session(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    discord.guild_message("remember the word cobalt", user_id=OWNER, mention_bot=True)
    await discord.wait_for_sent(1)
    discord.thread_message("which word?", thread_id=5100, user_id=OWNER, mention_bot=True)
    (_, in_thread) = await discord.wait_for_sent(2)
    assert in_thread["channel_id"] == 5100
    history = str(fake_llm.requests[1]["messages"])
    assert "thread 5100" in history and "cobalt" not in history


async def test_long_reply_is_split_with_code_blocks_intact(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(150)) + "\n```"
    prose = "\n\n".join(("Some words about the code. " * 10).strip() for _ in range(6))
    fake_llm.script(Text(prose + "\n\n" + code + "\n\n" + prose))
    discord.dm("explain", user_id=OWNER)
    sent = await discord.wait_for_sent(3)
    assert all(len(s["content"]) <= TEXT_LIMIT for s in sent)
    assert all(s["content"].count("```") == 2 for s in sent[1:])
    assert all(f"value_{i} = {i}\n" in "".join(s["content"] for s in sent) for i in range(150))
    assert "message_reference" in sent[0] and all("message_reference" not in s for s in sent[1:])
    assert len({s["nonce"] for s in sent}) == 3


@pytest.mark.parametrize("interruption", ["reconnect", "drop"])
async def test_a_gateway_interruption_loses_nothing_and_doubles_nothing(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord, interruption: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="channels.discord.channel")
    discord.dm("first", user_id=OWNER)
    await discord.wait_for_sent(1)
    getattr(discord, interruption)()
    discord.dm("second", user_id=OWNER)
    await discord.wait_for_op(6)
    await discord.wait_for_sent(2)
    discord.dm("third", user_id=OWNER)
    sent = await discord.wait_for_sent(3)
    assert [s["content"].splitlines()[-1] for s in sent] == ["first", "second", "third"]
    assert len(discord.sent) == 3 and len(fake_llm.requests) == 3
    assert [frame["op"] for frame in discord.received].count(2) == 1
    assert discord.connections[-1].startswith("/resume?")
    assert "gateway connection lost" in caplog.text and "gateway reconnected and resumed" in caplog.text


async def test_image_reaches_the_model_as_an_image(bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord) -> None:
    image = discord.attachment("cat.png", b"\x89PNG fake image bytes", "image/png")
    document = discord.attachment("notes.pdf", b"%PDF-1.7 fake", "application/pdf")
    discord.dm("what is this?", user_id=OWNER, attachments=[image, document])
    await discord.wait_for_sent(1)
    content = fake_llm.requests[0]["messages"][-1]["content"]
    assert "what is this?" in content[0]["text"] and "[attached file: " in content[0]["text"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,") and len(content) == 2
    [chat] = (bot.config.workspace / "inbox" / "discord").iterdir()  # each chat has its own folder
    saved = sorted(p.name for p in chat.iterdir())
    assert saved == sorted([f"{image['id']}.png", f"{document['id']}.pdf"])


async def test_bots_are_ignored(bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord) -> None:
    discord.dm("beep", user_id=555, bot=True)
    discord.dm("barrier", user_id=OWNER)
    await discord.wait_for_sent(1)
    assert len(fake_llm.requests) == 1 and len(discord.sent) == 1


async def test_typing_shows_while_the_turn_runs(tmp_path: Path, discord: FakeDiscord) -> None:
    async with FakeLLM(latency=0.3) as slow_llm, DiscordBot(tmp_path, slow_llm, discord) as bot:
        await bot.gateway.manager.ready("discord")
        message = discord.dm("think hard", user_id=OWNER)
        await discord.wait_for_sent(1)
    assert discord.typing[0] == int(message["channel_id"])


async def test_api_down_at_start_connects_once_it_is_back(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    discord.down = True
    async with DiscordBot(tmp_path, fake_llm, discord) as bot:
        await discord.wait_for_call("users/@me", 2)
        discord.down = False
        await bot.gateway.manager.ready("discord")
        discord.dm("are you up?", user_id=OWNER)
        (sent,) = await discord.wait_for_sent(1)
    assert sent["content"].endswith("are you up?")


@pytest.mark.parametrize(
    ("token", "message_content_allowed", "error"),
    [("wrong-token", True, "refused the bot token"), (None, False, "refused the Message Content intent")],
)
async def test_start_fails_with_a_clear_error_when_discord_refuses(
    tmp_path: Path, token: str | None, message_content_allowed: bool, error: str
) -> None:
    async def publish(message: InboundMessage) -> None:
        raise AssertionError("nothing should be published")

    async with FakeDiscord(message_content_allowed=message_content_allowed) as discord:
        endpoints = {"api_base": discord.api_base, "gateway_url": discord.gateway_url}
        section = DiscordConfig(token=token or discord.token, **endpoints)
        with pytest.raises(ChannelError, match=error):
            await DiscordChannel(publish, section, tmp_path).start()


async def first_exchange(tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord) -> None:
    """Run the bot once: the owner says hello and is answered, so the chat is known for catching up."""
    fake_llm.script(Text("first"))
    async with DiscordBot(tmp_path, fake_llm, discord) as running:
        await running.gateway.manager.ready("discord")
        discord.dm("hello", user_id=OWNER)
        await discord.wait_for_sent(1)


async def barrier(discord: FakeDiscord) -> None:
    """The owner writes once more and is answered: whatever catch-up put in the chat before was answered first."""
    sent = len(discord.sent)
    discord.dm("barrier", user_id=OWNER)
    await discord.wait_for_sent(sent + 1)
    assert len(discord.sent) == sent + 1 and discord.sent[-1]["content"].endswith("barrier")


async def test_a_dm_sent_while_the_bot_was_down_is_answered_once_after_start(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    await first_exchange(tmp_path, fake_llm, discord)
    missed = discord.dm_while_offline("while you were away", user_id=OWNER)
    fake_llm.script(Text("caught up"))
    async with DiscordBot(tmp_path, fake_llm, discord) as running:
        await running.gateway.manager.ready("discord")
        first, second = await discord.wait_for_sent(2)
        assert last_user_text(fake_llm).endswith("while you were away")
        await barrier(discord)
    assert second["content"] == "caught up" and second["message_reference"]["message_id"] == int(missed["id"])
    assert len(fake_llm.requests) == 3


async def test_catch_up_skips_a_message_already_journaled(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    await first_exchange(tmp_path, fake_llm, discord)
    # The journal has the message, but the last id on record is older (a crash between the two writes).
    active = tmp_path / "state" / "catchup" / "discord.json"
    rows = json.loads(active.read_text())
    active.write_text(json.dumps([{**row, "last_id": "1"} for row in rows]))
    async with DiscordBot(tmp_path, fake_llm, discord) as running:
        await running.gateway.manager.ready("discord")
        await discord.wait_for_call(f"channels/{rows[0]['chat_id']}/messages")
        await barrier(discord)
    assert len(fake_llm.requests) == 2  # the first exchange and the barrier: the journaled message is not run again


MENU = (
    CommandSpec("new", "Start a new conversation"),
    CommandSpec("pair", "Pair", "private"),
    CommandSpec("activation", "Who wakes me", "groups"),
)


async def test_commands_are_registered_globally_once(tmp_path: Path, discord: FakeDiscord) -> None:
    async with discord_adapter(discord, tmp_path) as running:
        assert isinstance(running.channel, OffersCommands) and isinstance(running.channel, Reacts)
        await running.channel.set_commands(MENU)
        await running.channel.set_commands(MENU)  # unchanged: nothing to send
    assert discord.interactions.command_puts == [None]
    registered = {
        c["name"]: (c["contexts"], [o["name"] for o in c["options"]]) for c in discord.interactions.commands[None]
    }
    assert registered == {"new": ([0, 1], ["args"]), "pair": ([1], ["args"]), "activation": ([0], ["args"])}


async def test_commands_go_to_the_configured_guilds(tmp_path: Path, discord: FakeDiscord) -> None:
    async with discord_adapter(discord, tmp_path, command_guilds=[discord.guild_id]) as running:
        await running.channel.set_commands(MENU)
    assert discord.interactions.command_puts == [discord.guild_id]
    assert [c["name"] for c in discord.interactions.commands[discord.guild_id]] == ["new", "activation"]


async def test_a_slash_command_is_answered_in_its_deferred_response(
    bot: DiscordBot, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    discord.command("help", user_id=OWNER)
    await discord.wait_until(lambda: bool(discord.interactions.original_edits), "the response filled")
    (callback,) = discord.interactions.callbacks
    (answer,) = discord.interactions.original_edits
    assert callback["type"] == 5 and "/new" in answer["content"]
    assert not discord.sent and not fake_llm.requests
