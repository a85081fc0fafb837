"""Which message shows a prompt's buttons: remembered per chat, bounded, and used once to close the prompt."""

from bot.bus import ChatRef, Choice, OutboundMessage
from channels.prompt_messages import PromptMessages

CHAT = ChatRef("test", "1")
ASKED = OutboundMessage(CHAT, "Which?", choices=(Choice("1", "a"), Choice("2", "b")), prompt_id="P1")


def closing(prompt_id: str = "P1", chat: ChatRef = CHAT) -> OutboundMessage:
    return OutboundMessage(chat, "Which?\n→ a (typed)", prompt_id=prompt_id)


def test_a_closing_message_becomes_an_edit_of_the_prompts_message_once() -> None:
    prompts = PromptMessages()
    prompts.record(ASKED, "m-7")
    assert prompts.resolve(closing()).edit_of == "m-7"
    assert prompts.resolve(closing()).edit_of is None


def test_other_chats_messages_without_buttons_and_forgotten_prompts_are_left_alone() -> None:
    prompts = PromptMessages(limit=1)
    prompts.record(OutboundMessage(CHAT, "no buttons", prompt_id="P0"), "m-1")
    prompts.record(ASKED, "m-7")
    prompts.record(OutboundMessage(CHAT, "Next?", choices=ASKED.choices, prompt_id="P2"), "m-8")
    assert prompts.resolve(closing("P0")).edit_of is None
    assert prompts.resolve(closing("P1")).edit_of is None  # forgotten: over the limit
    assert prompts.resolve(closing("P2", ChatRef("test", "2"))).edit_of is None
    assert prompts.resolve(ASKED) is ASKED
