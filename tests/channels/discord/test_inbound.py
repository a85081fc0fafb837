"""What the Discord adapter publishes, driven through the real discord.py by the fake gateway."""

from pathlib import Path

from bot.bus import OutboundMessage, Press
from bot.bus.messages import ChatRef, Choice
from tests.fakes.discord_interactions import ACK_DEADLINE
from tests.fakes.discord_server import FakeDiscord
from tests.support.adapter import AdapterUnderTest

OWNER, OTHER = 42, 43


async def test_a_guild_message_without_a_mention_is_published_unmentioned(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    discord.guild_message("lunch at noon?", user_id=OTHER)
    message = await adapter.next()
    assert (message.text, message.mentioned, message.is_direct) == ("lunch at noon?", False, False)
    assert message.server_id == str(discord.guild_id)


async def test_a_reply_carries_the_replied_to_message_and_its_image(
    adapter: AdapterUnderTest, discord: FakeDiscord, tmp_path: Path
) -> None:
    photo = discord.attachment("chart.png", b"\x89PNG chart", "image/png")
    shown = discord.guild_message("look at this " + "x" * 1200, user_id=OTHER, attachments=[photo])
    await adapter.next()
    discord.guild_message("what does it show?", user_id=OWNER, mention_bot=True, reply_to=shown)
    message = await adapter.next()
    quote = message.reply_to
    assert quote is not None and message.mentioned
    assert quote.text.startswith("look at this x") and len(quote.text) == 1000
    assert (quote.author_id, quote.author_name, quote.from_bot) == (str(OTHER), "User43", False)
    assert quote.platform_message_id == shown["id"] and not discord.fetched
    assert quote.image is not None and Path(quote.image.path).read_bytes() == b"\x89PNG chart"
    assert Path(quote.image.path).is_relative_to(tmp_path) and quote.image.kind == "image"


async def test_a_reply_the_gateway_did_not_resolve_is_fetched(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    await adapter.channel.send(OutboundMessage(ChatRef("discord", str(discord.channel_id)), "It is sunny."))
    (answer,) = await discord.wait_for_sent(1)
    discord.guild_message("and tomorrow?", user_id=OWNER, reply_to=answer, resolve_reply=False)
    message = await adapter.next()
    assert discord.fetched == [int(answer["id"])]
    assert message.reply_to is not None and message.reply_to.from_bot and message.reply_to.text == "It is sunny."
    assert message.mentioned  # a reply to the bot is addressed to it


async def test_several_attachments_are_one_message_with_all_of_them(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    files = [discord.attachment(f"page{i}.png", f"page {i}".encode(), "image/png") for i in range(3)]
    discord.dm("compare these", user_id=OWNER, attachments=files)
    message = await adapter.next()
    assert message.text == "compare these" and [a.kind for a in message.attachments] == ["image"] * 3
    assert [Path(a.path).read_bytes() for a in message.attachments] == [b"page 0", b"page 1", b"page 2"]
    assert adapter.nothing_more()


async def test_an_edit_is_published_as_an_edit_of_the_original_never_as_a_new_message(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    original = discord.dm("meet at 5", user_id=OWNER)
    first = await adapter.next()
    discord.edit(original, "meet at 6")
    edited = await adapter.next()
    discord.edit(original, "meet at 7")
    again = await adapter.next()
    assert first.edit_of is None and (edited.edit_of, again.edit_of) == (original["id"], original["id"])
    assert (edited.text, again.text) == ("meet at 6", "meet at 7")
    ids = {first.platform_message_id, edited.platform_message_id, again.platform_message_id}
    assert len(ids) == 3 and edited.platform_message_id.startswith(f"{original['id']}@")


async def test_an_update_nobody_made_is_not_an_edit(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    original = discord.dm("see https://example.org", user_id=OWNER)
    await adapter.next()
    discord.dispatch("MESSAGE_UPDATE", {**original, "embeds": []})  # Discord resolved a link preview
    discord.dm("barrier", user_id=OWNER)
    assert (await adapter.next()).text == "barrier"


async def test_a_slash_command_is_deferred_in_time_and_published_as_its_text(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    interaction = discord.command("model", "fast", user_id=OWNER)
    message = await adapter.next()
    (callback,) = discord.interactions.callbacks
    assert callback["type"] == 5 and callback["after"] < ACK_DEADLINE  # "thinking…" until the answer
    assert (message.text, message.sender_id, message.mentioned) == ("/model fast", str(OWNER), True)
    assert message.platform_message_id == interaction["id"] and not message.stream
    assert message.chat == ChatRef("discord", str(discord.channel_id))


async def test_a_slash_command_in_a_dm_is_direct(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    discord.command("new", user_id=OWNER, dm=True)
    message = await adapter.next()
    assert message.text == "/new" and message.is_direct and message.server_id is None


async def test_a_button_press_is_acknowledged_as_a_deferred_update_and_published_as_a_press(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    chat = ChatRef("discord", str(discord.channel_id))
    choices = (Choice("once", "Allow once", "primary"), Choice("deny", "Deny", "danger"))
    await adapter.channel.send(OutboundMessage(chat, "Run `ls`?", choices=choices, prompt_id="K7Q"))
    (prompt,) = await discord.wait_for_sent(1)
    discord.press(prompt, "K7Q:deny", user_id=OTHER)
    message = await adapter.next()
    (callback,) = discord.interactions.callbacks
    assert callback["type"] == 6 and callback["after"] < ACK_DEADLINE
    assert message.press == Press("K7Q", "deny", prompt["id"]) and message.text == "Deny"
    assert (message.sender_id, message.mentioned) == (str(OTHER), True)
