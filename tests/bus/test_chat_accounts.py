"""A chat on a named bot: its session key, folder and channel key keep it apart from the same chat id elsewhere."""

import pytest

from bot.bus import ChatRef, InboundMessage
from bot.bus.messages import inbound_from_json, inbound_to_json


def test_the_default_bot_keeps_todays_keys() -> None:
    chat = ChatRef("telegram", "123", "7")
    assert (chat.session_key, chat.channel_key, chat.folder) == ("telegram:123:7", "telegram", "telegram/123")


def test_a_named_bot_writes_its_account_into_the_key_and_reads_it_back() -> None:
    chat = ChatRef("telegram", "-100", "7", account="work")
    assert chat.session_key == "telegram@work:-100:7"
    assert chat.channel_key == "telegram@work"
    assert chat.folder == "telegram@work/-100"
    assert chat.whole_chat == ChatRef("telegram", "-100", None, "work")
    for ref in (chat, chat.whole_chat, ChatRef("discord", "5"), ChatRef("slack", "C1", "1.2", "support")):
        assert ChatRef.parse(ref.session_key) == ref


def test_the_same_chat_on_two_bots_is_two_sessions_and_two_folders() -> None:
    mine, theirs = ChatRef("telegram", "42", account="home"), ChatRef("telegram", "42", account="work")
    assert len({mine.session_key, theirs.session_key, ChatRef("telegram", "42").session_key}) == 3
    assert mine.folder != theirs.folder


@pytest.mark.parametrize("text", ["telegram@:1", "@work:1", "telegram@wo rk:1", "telegram@a@b:1", "telegram@work"])
def test_a_malformed_account_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a chat"):
        ChatRef.parse(text)


def test_the_account_crosses_the_bus_as_json() -> None:
    message = InboundMessage(ChatRef("discord", "9", account="support"), "1", "hi")
    assert inbound_from_json(inbound_to_json(message)).chat.account == "support"
