"""How the Discord adapter delivers: buttons, answers through interactions, edits in place, private notices."""

from bot.bus import OutboundMessage
from bot.bus.messages import ChatRef, Choice
from tests.fakes.discord_server import TEXT_LIMIT, FakeDiscord
from tests.support.adapter import AdapterUnderTest

OWNER, OTHER = 42, 43
CHOICES = (Choice("once", "Allow once", "primary"), Choice("always", "Allow always"), Choice("deny", "Deny", "danger"))


def in_channel(discord: FakeDiscord) -> ChatRef:
    return ChatRef("discord", str(discord.channel_id))


def buttons(message: dict) -> list[tuple[str, str, int]]:
    return [(b["custom_id"], b["label"], b["style"]) for row in message["components"] for b in row["components"]]


async def prompt(adapter: AdapterUnderTest, discord: FakeDiscord) -> dict:
    """The bot asks with three buttons; the message as Discord stored it."""
    await adapter.channel.send(OutboundMessage(in_channel(discord), "Run `ls`?", choices=CHOICES, prompt_id="K7Q"))
    return (await discord.wait_for_sent(1))[0]


async def test_choices_are_buttons_under_the_last_chunk(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    text = "\n\n".join(["word " * 300] * 2).strip()
    await adapter.channel.send(OutboundMessage(in_channel(discord), text, choices=CHOICES, prompt_id="K7Q"))
    first, last = await discord.wait_for_sent(2)
    assert not first.get("components")
    assert buttons(last) == [("K7Q:once", "Allow once", 1), ("K7Q:always", "Allow always", 2), ("K7Q:deny", "Deny", 4)]


async def test_a_decided_prompt_is_edited_through_the_press_and_loses_its_buttons(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    shown = await prompt(adapter, discord)
    discord.press(shown, "K7Q:once", user_id=OWNER)
    press = await adapter.next()
    text = "Allowed once by User42."
    decided = OutboundMessage(press.chat, text, edit_of=shown["id"], reply_to_platform_id=press.platform_message_id)
    await adapter.channel.send(decided)
    assert not discord.interactions.followups
    (edit,) = discord.interactions.original_edits
    assert edit["message_id"] == "@original" and edit["id"] == shown["id"]
    assert edit["content"] == "Allowed once by User42." and edit["components"] == []
    assert len(discord.sent) == 1 and not discord.edits


async def test_edit_of_without_a_press_edits_the_channel_message(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    shown = await prompt(adapter, discord)
    await adapter.channel.send(OutboundMessage(in_channel(discord), "Timed out.", edit_of=shown["id"]))
    (edit,) = discord.edits
    assert (edit["id"], edit["content"], edit["components"]) == (shown["id"], "Timed out.", [])


async def test_a_prompt_closed_without_a_press_is_edited_in_place_without_its_buttons(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    shown = await prompt(adapter, discord)
    await adapter.channel.send(OutboundMessage(in_channel(discord), "Run `ls`?\nTimed out, not run.", prompt_id="K7Q"))
    (edit,) = discord.edits
    assert (edit["id"], edit["content"], edit["components"]) == (shown["id"], "Run `ls`?\nTimed out, not run.", [])
    assert len(discord.sent) == 1


async def test_closing_a_prompt_the_adapter_does_not_know_sends_the_text_anew(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    await adapter.channel.send(OutboundMessage(in_channel(discord), "Timed out, not run.", prompt_id="ZZZ"))
    (sent,) = await discord.wait_for_sent(1)
    assert sent["content"] == "Timed out, not run." and not discord.edits


async def test_edit_of_a_message_that_is_gone_is_sent_anew(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    await adapter.channel.send(OutboundMessage(in_channel(discord), "Denied.", edit_of="123456"))
    (sent,) = await discord.wait_for_sent(1)
    assert sent["content"] == "Denied." and not discord.edits


async def test_a_private_notice_goes_to_the_presser_alone(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    shown = await prompt(adapter, discord)
    discord.press(shown, "K7Q:deny", user_id=OTHER)
    await adapter.next()
    notice = OutboundMessage(in_channel(discord), "Not yours to decide.", kind="notice", private_to=str(OTHER))
    await adapter.channel.send(notice)
    (followup,) = discord.interactions.followups
    assert followup["content"] == "Not yours to decide." and followup["ephemeral"]
    assert len(discord.sent) == 1


async def test_a_private_notice_without_an_interaction_is_a_normal_message(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    notice = OutboundMessage(in_channel(discord), "Only owners can do that.", kind="notice", private_to=str(OTHER))
    await adapter.channel.send(notice)
    (sent,) = await discord.wait_for_sent(1)
    assert sent["content"] == "Only owners can do that." and not discord.interactions.followups


async def test_a_command_is_answered_in_its_deferred_response_then_in_follow_ups(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    discord.command("status", user_id=OWNER)
    command = await adapter.next()
    text = "\n\n".join(["status " * 250] * 2).strip()
    answering = command.platform_message_id
    reply = OutboundMessage(command.chat, text, reply_to_platform_id=answering, choices=CHOICES[:1], prompt_id="M1")
    await adapter.channel.send(reply)
    (original,) = discord.interactions.original_edits
    (followup,) = discord.interactions.followups
    assert original["message_id"] == "@original" and len(original["content"]) <= TEXT_LIMIT
    assert not original.get("components") and buttons(followup) == [("M1:once", "Allow once", 1)]
    assert not followup["ephemeral"] and not discord.sent


async def test_a_revised_answer_replaces_the_earlier_reply_in_place(
    adapter: AdapterUnderTest, discord: FakeDiscord
) -> None:
    asked = discord.guild_message("how far is the moon?", user_id=OWNER, mention_bot=True)
    await adapter.next()
    chat = in_channel(discord)
    long_answer = "\n\n".join(["far " * 400] * 2).strip()
    await adapter.channel.send(OutboundMessage(chat, long_answer, reply_to_platform_id=asked["id"]))
    first, second = await discord.wait_for_sent(2)
    await adapter.channel.send(OutboundMessage(chat, "About 384,400 km.", revises_reply_to=asked["id"]))
    (edit,) = discord.edits
    assert (edit["id"], edit["content"]) == (first["id"], "About 384,400 km.")
    assert ("DELETE", f"channels/{discord.channel_id}/messages/{second['id']}") in discord.calls
    assert len(discord.sent) == 2


async def test_a_revision_of_an_unknown_reply_is_sent_anew(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    await adapter.channel.send(OutboundMessage(in_channel(discord), "Again: 42.", revises_reply_to="987654"))
    (sent,) = await discord.wait_for_sent(1)
    assert sent["content"] == "Again: 42." and not discord.edits


async def test_reactions_mark_seen_then_done_or_failed(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    done = discord.guild_message("one", user_id=OWNER, mention_bot=True)
    failed = discord.guild_message("two", user_id=OWNER, mention_bot=True)
    chat = in_channel(discord)
    for message, status in ((done, "done"), (failed, "failed")):
        await adapter.channel.react(chat, message["id"], "seen")
        await adapter.channel.react(chat, message["id"], status)
    one, two = int(done["id"]), int(failed["id"])
    assert discord.reactions == [
        ("add", one, "👀"),
        ("remove", one, "👀"),
        ("add", one, "✅"),
        ("add", two, "👀"),
        ("remove", two, "👀"),
        ("add", two, "❌"),
    ]


async def test_a_command_has_no_message_to_react_to(adapter: AdapterUnderTest, discord: FakeDiscord) -> None:
    discord.command("help", user_id=OWNER)
    command = await adapter.next()
    await adapter.channel.react(command.chat, command.platform_message_id, "seen")
    assert discord.reactions == []
