"""Numbered choices for channels without buttons: shown as lines, and a typed number presses its button."""

from bot.bus import ChatRef, Choice, OutboundMessage, Press
from channels.numbered import NumberedChoices

CHAT = ChatRef("console", "local")
PROMPT = OutboundMessage(
    CHAT, "Run `rm -r x`?", choices=(Choice("once", "Allow once"), Choice("deny", "Deny")), prompt_id="K7Q"
)


def test_choices_are_shown_as_numbered_lines_and_a_number_presses_once() -> None:
    choices = NumberedChoices()
    assert choices.shown(PROMPT) == "Run `rm -r x`?\n1. Allow once\n2. Deny"
    assert choices.press(CHAT, "3") is None
    assert choices.press(CHAT, "hello") is None
    assert choices.press(ChatRef("console", "other"), "1") is None
    assert choices.press(CHAT, " 2. ") == (Press("K7Q", "deny"), "Deny")
    assert choices.press(CHAT, "2") is None


def test_a_message_without_choices_is_unchanged() -> None:
    assert NumberedChoices().shown(OutboundMessage(CHAT, "plain")) == "plain"


def test_only_the_chats_with_a_prompt_shown_last_are_remembered() -> None:
    choices = NumberedChoices(limit=2)
    for chat_id in ("a", "b", "c"):
        choices.shown(OutboundMessage(ChatRef("api", chat_id), "Go?", choices=PROMPT.choices, prompt_id=chat_id))
    assert choices.press(ChatRef("api", "a"), "1") is None
    assert choices.press(ChatRef("api", "b"), "1") == (Press("b", "once"), "Allow once")
    assert choices.press(ChatRef("api", "c"), "2") == (Press("c", "deny"), "Deny")
