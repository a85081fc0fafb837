from dataclasses import replace

from bot.bus import ChatRef, Press
from channels.discord.interactions import DiscordInteraction, button_label, choice_custom_id, parse_interaction

BOT_ID = 900
COMMAND = DiscordInteraction(
    id=1, type=2, channel_id=20, guild_id=30, thread_parent_id=None, user_id=42, user_name="Ann", user_is_bot=False,
    name="model", args="fast",
)  # fmt: skip
PRESS = replace(COMMAND, type=3, name="", args="", custom_id="K7Q:deny", label="Deny", message_id=7)


def test_a_command_is_its_text_addressed_to_the_bot() -> None:
    message = parse_interaction(COMMAND, BOT_ID)
    assert message is not None and (message.text, message.mentioned, message.is_direct) == ("/model fast", True, False)
    assert (message.platform_message_id, message.server_id, message.press) == ("1", "30", None)
    assert parse_interaction(replace(COMMAND, args=""), BOT_ID).text == "/model"


def test_a_press_names_prompt_choice_and_message_with_the_label_as_text() -> None:
    message = parse_interaction(PRESS, BOT_ID)
    assert message is not None and message.press == Press("K7Q", "deny", "7") and message.text == "Deny"
    assert parse_interaction(replace(PRESS, label=""), BOT_ID).text == "deny"


def test_in_a_thread_the_interaction_belongs_to_the_thread_session() -> None:
    message = parse_interaction(replace(COMMAND, channel_id=55, thread_parent_id=20), BOT_ID)
    assert message.chat == ChatRef("discord", "20", "55")


def test_foreign_buttons_other_types_and_bots_are_skipped() -> None:
    assert parse_interaction(replace(PRESS, custom_id="someone-elses-button"), BOT_ID) is None
    assert parse_interaction(replace(COMMAND, type=4), BOT_ID) is None  # autocomplete
    assert parse_interaction(replace(COMMAND, user_is_bot=True), BOT_ID) is None


def test_custom_ids_round_trip_and_fit_discord() -> None:
    assert choice_custom_id("K7Q", "once") == "K7Q:once"
    assert len(choice_custom_id("p" * 90, "c" * 30)) == 100


class _Button:
    def __init__(self, custom_id: str, label: str) -> None:
        self.custom_id, self.label = custom_id, label


class _Row:
    def __init__(self, *children: _Button) -> None:
        self.children = children


def test_the_label_is_read_from_the_message_buttons() -> None:
    rows = [_Row(_Button("K7Q:once", "Allow once")), _Row(_Button("K7Q:deny", "Deny"))]
    assert button_label(rows, "K7Q:deny") == "Deny" and button_label(rows, "K7Q:x") == ""
