"""The Telegram adapter's buttons, in-place edits, reactions and command menus against the fake Bot API."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.bus import ChatRef, Choice, OutboundMessage, Press, Trust
from bot.commands.catalogue import CommandSpec
from channels.telegram.channel import TelegramChannel
from tests.fakes.telegram_server import FakeTelegram
from tests.support.adapter import AdapterUnderTest, telegram_adapter
from tests.support.publishing import Published

GROUP = -1001
CHAT = ChatRef("telegram", str(GROUP))
APPROVAL = (Choice("once", "Allow once", "primary"), Choice("always", "Allow always"), Choice("deny", "Deny", "danger"))


@pytest_asyncio.fixture
async def adapter(tmp_path: Path, telegram: FakeTelegram) -> AsyncIterator[AdapterUnderTest[TelegramChannel]]:
    async with telegram_adapter(telegram, tmp_path) as bot:
        yield bot


@pytest_asyncio.fixture
def channel(adapter: AdapterUnderTest[TelegramChannel]) -> TelegramChannel:
    return adapter.channel


@pytest_asyncio.fixture
def published(adapter: AdapterUnderTest[TelegramChannel]) -> Published:
    return adapter.published


def prompt(text: str = "Run `ls -la`?", **fields: object) -> OutboundMessage:
    return OutboundMessage(CHAT, text, choices=APPROVAL, prompt_id="K7Q", **fields)  # type: ignore[arg-type]


async def test_choices_are_an_inline_keyboard_whose_press_is_answered_and_published(
    channel: TelegramChannel, telegram: FakeTelegram, published: Published
) -> None:
    await channel.send(prompt())
    (sent,) = telegram.sent
    rows = sent["reply_markup"]["inline_keyboard"]
    assert [[(b["text"], b["callback_data"]) for b in row] for row in rows] == [
        [("Allow once", "K7Q:once"), ("Allow always", "K7Q:always"), ("Deny", "K7Q:deny")]
    ]
    shown = telegram.message(GROUP, sent["message_id"])
    press = telegram.press(shown, "K7Q:always", user_id=7, first_name="Bo")
    (message,) = await published.wait_for(1)
    assert message.press == Press("K7Q", "always", str(sent["message_id"]))
    assert (message.text, message.sender_id, message.sender_name) == ("Allow always", "7", "Bo")
    assert [a["callback_query_id"] for a in telegram.answered] == [press["callback_query"]["id"]]


async def test_long_labels_get_a_row_each() -> None:
    from channels.telegram.buttons import button_rows

    rows = button_rows([Choice("a", "A rather long first option"), Choice("b", "B")])
    assert rows == [[("A rather long first option", "a")], [("B", "b")]]


async def test_a_long_prompt_carries_its_buttons_under_its_last_part(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    await channel.send(prompt("word " * 1200))
    first, last = telegram.sent
    assert "reply_markup" not in first or not first["reply_markup"]
    (added,) = telegram.markup_edits
    assert added["message_id"] == last["message_id"]
    assert telegram.message(GROUP, last["message_id"])["reply_markup"]["inline_keyboard"][0][0]["text"] == "Allow once"


async def test_a_decided_prompt_is_edited_in_place_without_its_buttons(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    await channel.send(prompt())
    (sent,) = telegram.sent
    await channel.send(OutboundMessage(CHAT, "Run `ls -la`? **Allowed once** by Ann", edit_of=str(sent["message_id"])))
    assert len(telegram.sent) == 1
    shown = telegram.message(GROUP, sent["message_id"])
    assert shown["text"] == "Run ls -la? Allowed once by Ann" and "reply_markup" not in shown
    await channel.send(OutboundMessage(CHAT, "Run `ls -la`? **Allowed once** by Ann", edit_of=str(sent["message_id"])))
    assert len(telegram.sent) == 1  # "message is not modified" is success, never a second message


async def test_a_prompt_closed_without_a_press_is_replaced_in_place_without_its_buttons(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    await channel.send(prompt())
    (sent,) = telegram.sent
    await channel.send(OutboundMessage(CHAT, "Run `ls -la`?\nTimed out, not run.", prompt_id="K7Q"))
    assert len(telegram.sent) == 1
    shown = telegram.message(GROUP, sent["message_id"])
    assert shown["text"] == "Run ls -la?\nTimed out, not run." and "reply_markup" not in shown


async def test_closing_a_prompt_the_adapter_does_not_know_sends_the_text_anew(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    await channel.send(OutboundMessage(CHAT, "Timed out, not run.", prompt_id="ZZZ"))
    (sent,) = telegram.sent
    assert sent["text"] == "Timed out, not run." and not sent.get("reply_markup")


async def test_an_edit_of_a_message_that_cannot_be_edited_is_sent_anew(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    await channel.send(OutboundMessage(CHAT, "Denied by Ann", edit_of="99999"))
    (sent,) = telegram.sent
    assert sent["text"] == "Denied by Ann"


async def test_a_rerun_answer_replaces_the_earlier_reply_in_place(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    asked = telegram.text("@relay_bot what is 2+3?", chat_id=GROUP, chat_type="supergroup")
    user_id = str(asked["message"]["message_id"])
    await channel.send(OutboundMessage(CHAT, "It is 5.", reply_to_platform_id=user_id))
    (reply,) = telegram.sent
    await channel.send(OutboundMessage(CHAT, "It is 6.", revises_reply_to=user_id, reply_to_platform_id=user_id))
    assert len(telegram.sent) == 1 and telegram.message(GROUP, reply["message_id"])["text"] == "It is 6."
    await channel.send(OutboundMessage(CHAT, "A fresh answer.", revises_reply_to="4242"))
    assert [s["text"] for s in telegram.sent] == ["It is 5.", "A fresh answer."]


async def test_a_private_notice_is_a_normal_message_on_telegram(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    await channel.send(OutboundMessage(CHAT, "This approval is not yours.", kind="notice", private_to="7"))
    assert [s["text"] for s in telegram.sent] == ["This approval is not yours."]


async def test_reactions_use_marks_from_telegrams_set_and_never_raise(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    asked = telegram.text("@relay_bot hi", chat_id=GROUP, chat_type="supergroup")
    number = str(asked["message"]["message_id"])
    for status in ("seen", "done", "failed"):
        await channel.react(CHAT, number, status)  # type: ignore[arg-type]
    await channel.react(CHAT, f"{number}@1700", "seen")  # an edit's id marks the edited message
    await channel.react(CHAT, "press:cbq-1", "seen")  # a press has no message of its own: nothing happens
    await channel.react(CHAT, "4242", "done")  # Telegram refuses: logged, not raised
    marks = [r["reaction"][0]["emoji"] for r in telegram.reactions]
    assert marks == ["👀", "👍", "👎", "👀"]
    assert all(r["message_id"] == int(number) for r in telegram.reactions)


async def test_command_menus_are_set_per_scope_and_only_when_they_changed(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    commands = [
        CommandSpec("new", "Start a new conversation"),
        CommandSpec("activation", "Answer every message or only mentions", "groups"),
        CommandSpec("usage", "What this chat has cost", "private"),
    ]
    await channel.set_commands(commands)
    assert telegram.menus["all_private_chats"] == [
        {"command": "new", "description": "Start a new conversation"},
        {"command": "usage", "description": "What this chat has cost"},
    ]
    assert [c["command"] for c in telegram.menus["all_group_chats"]] == ["new", "activation"]
    await channel.set_commands(commands)
    assert len(telegram.menu_updates) == 2
    await channel.set_commands([*commands, CommandSpec("model", "Choose the model", "private")])
    assert [u["scope"] for u in telegram.menu_updates] == ["all_private_chats", "all_group_chats", "all_private_chats"]


async def test_privileged_commands_are_listed_only_in_owners_chats_and_for_group_administrators(
    channel: TelegramChannel, telegram: FakeTelegram
) -> None:
    commands = [
        CommandSpec("new", "Start a new conversation"),
        CommandSpec("approve", "Approve a waiting command", role=Trust.ADMIN),
        CommandSpec("activation", "Answer every message or only mentions", "groups", Trust.ADMIN),
    ]
    await channel.set_commands(commands, privileged=["42", "someone@elsewhere"])
    names = {scope: [c["command"] for c in menu] for scope, menu in telegram.menus.items()}
    assert names == {
        "all_private_chats": ["new"],
        "all_group_chats": ["new"],
        "all_chat_administrators": ["new", "approve", "activation"],
        "chat:42": ["new", "approve"],  # the owner's private chat; an id that is no Telegram user gets none
    }
    await channel.set_commands(commands, privileged=["42"])
    assert len(telegram.menu_updates) == 4  # unchanged: nothing sent again


async def test_every_press_is_answered_even_one_on_a_button_not_ours(
    channel: TelegramChannel, telegram: FakeTelegram, published: Published
) -> None:
    await channel.send(prompt())
    shown = telegram.message(GROUP, telegram.sent[0]["message_id"])
    telegram.press(shown, "stale-button")
    telegram.fail("answerCallbackQuery", status=400, description="Bad Request: query is too old")
    telegram.press(shown, "K7Q:deny")
    (message,) = await published.wait_for(1)
    assert message.press == Press("K7Q", "deny", str(shown["message_id"]))  # published though its ack failed
    assert len(telegram.answered) == 1 and len(published.messages) == 1
