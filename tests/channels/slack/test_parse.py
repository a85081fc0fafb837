from typing import Any

from bot.bus import Press
from channels.slack.menu import command_name, slash_name
from channels.slack.parse import files_of, parse_event, parse_press, parse_slash_command

BOT = "UBOT"


def event(text: str = "hi", **fields: Any) -> dict:
    body = {"type": "message", "channel": "D42", "channel_type": "im", "user": "U1", "text": text, "ts": "100.000200"}
    return {**body, **fields}


def test_direct_message() -> None:
    message = parse_event(event(), BOT, reply_in_thread=True)
    assert message is not None
    assert (message.chat.session_key, message.sender_id, message.text) == ("slack:D42", "U1", "hi")
    assert message.is_direct and message.platform_message_id == "D42:100.000200"


def test_channel_mention_is_detected_and_stripped() -> None:
    raw = event("<@UBOT> what's up &amp; &lt;why&gt;?", channel="C1", channel_type="channel")
    message = parse_event(raw, BOT, reply_in_thread=True)
    assert message.mentioned and not message.is_direct
    assert message.text == "what's up & <why>?"
    assert parse_event(event("hey <@UBOT|relaybot>", channel="C1", channel_type="channel"), BOT, True).text == "hey"


def test_app_mention_and_message_of_one_post_look_the_same() -> None:
    base = {"channel": "C1", "text": "<@UBOT> hello", "ts": "5.1", "thread_ts": "4.0"}
    mention = parse_event({"type": "app_mention", "user": "U1", **base}, BOT, True)
    message = parse_event(event(channel_type="channel", **base), BOT, True)
    assert (mention.chat, mention.platform_message_id, mention.mentioned, mention.is_direct) == (
        message.chat,
        message.platform_message_id,
        message.mentioned,
        message.is_direct,
    )


def test_plain_channel_message_is_not_a_mention() -> None:
    assert not parse_event(event(channel="C1", channel_type="channel"), BOT, True).mentioned


def test_threads_are_sessions_of_their_own() -> None:
    top = event(channel="C1", channel_type="channel", ts="7.0")
    assert parse_event(top, BOT, reply_in_thread=True).chat.session_key == "slack:C1:7.0"
    assert parse_event(top, BOT, reply_in_thread=False).chat.session_key == "slack:C1"
    reply = event(channel="C1", channel_type="channel", ts="9.0", thread_ts="7.0")
    assert parse_event(reply, BOT, reply_in_thread=False).chat.session_key == "slack:C1:7.0"
    assert parse_event(event(), BOT, reply_in_thread=True).chat.thread_id is None  # DMs stay flat


def test_reply_in_a_thread_the_bot_answered_counts_as_a_mention() -> None:
    reply = event(channel="C1", channel_type="channel", ts="9.0", thread_ts="7.0")
    assert parse_event(reply, BOT, True, bot_threads={"C1:7.0"}).mentioned
    assert not parse_event(reply, BOT, True, bot_threads={"C1:8.0"}).mentioned


def test_bots_edits_and_service_messages_are_skipped() -> None:
    assert parse_event(event(bot_id="B9"), BOT, True) is None
    assert parse_event(event(user=BOT), BOT, True) is None
    assert parse_event(event(subtype="bot_message"), BOT, True) is None
    assert parse_event(event(subtype="message_changed"), BOT, True) is None
    assert parse_event(event(subtype="channel_join"), BOT, True) is None
    assert parse_event(event(text=""), BOT, True) is None
    assert parse_event({"type": "reaction_added", "user": "U1"}, BOT, True) is None


def test_shared_files_are_listed_with_their_kind() -> None:
    files = [
        {"id": "F1", "name": "a.png", "mimetype": "image/png", "size": 10, "url_private": "https://x/a.png"},
        {"id": "F2", "name": "b.pdf", "mimetype": "application/pdf", "url_private_download": "https://x/b?dl"},
        {"id": "F3", "mode": "hidden_by_limit"},
    ]
    raw = event("", subtype="file_share", files=files)
    assert parse_event(raw, BOT, True) is not None
    assert [(f.unique_id, f.kind, f.source, f.size) for f in files_of(raw)] == [
        ("F1", "image", "https://x/a.png", 10),
        ("F2", "file", "https://x/b?dl", None),
    ]


def test_commands_survive_slacks_slash_workarounds() -> None:
    assert parse_event(event(" /new"), BOT, True).text == "/new"
    assert parse_event(event("<@UBOT> /new", channel="C1", channel_type="channel"), BOT, True).text == "/new"


def changed(text: str, previous: str = "hi", **message: Any) -> dict:
    inner = {"type": "message", "user": "U1", "text": text, "ts": "100.000200", "edited": {"user": "U1", "ts": "150.5"}}
    return {
        "type": "message",
        "subtype": "message_changed",
        "channel": "D42",
        "channel_type": "im",
        "ts": "150.6",
        "message": {**inner, **message},
        "previous_message": {**inner, "text": previous},
    }


def test_an_edit_names_the_message_it_replaces_and_is_a_new_delivery() -> None:
    message = parse_event(changed("hi there"), BOT, True)
    assert (message.text, message.edit_of) == ("hi there", "D42:100.000200")
    assert message.platform_message_id == "D42:100.000200@150.5"
    assert message.chat.session_key == "slack:D42" and message.is_direct


def test_changes_that_are_not_edits_are_skipped() -> None:
    unfurl = changed("hi", previous="hi")
    assert parse_event(unfurl, BOT, True) is None
    no_edit = changed("hi (3 replies)")
    del no_edit["message"]["edited"]
    assert parse_event(no_edit, BOT, True) is None
    assert parse_event(changed("new", bot_id="B9"), BOT, True) is None


def test_an_edit_in_a_channel_thread_keeps_its_session_and_mention() -> None:
    edit = changed("<@UBOT> better question", channel_type="channel", thread_ts="90.0")
    edit["channel"], edit["channel_type"] = "C1", "channel"
    message = parse_event(edit, BOT, True)
    assert message.chat.session_key == "slack:C1:90.0" and message.mentioned
    assert message.text == "better question" and message.edit_of == "C1:100.000200"


def block_actions(block_id: str = "relaybot:K7Q", channel: str = "C1", **container: Any) -> dict:
    return {
        "type": "block_actions",
        "user": {"id": "U1", "name": "olive"},
        "team": {"id": "T1"},
        "container": {"type": "message", "message_ts": "200.1", "channel_id": channel, **container},
        "message": {"ts": "200.1"},
        "trigger_id": "9.9",
        "actions": [
            {
                "type": "button",
                "block_id": block_id,
                "action_id": "allow_once",
                "text": {"type": "plain_text", "text": "Allow once"},
                "action_ts": "201.5",
            }
        ],
    }


def test_a_button_press_carries_the_prompt_choice_and_prompt_message() -> None:
    message = parse_press(block_actions(thread_ts="190.0"))
    assert message.press == Press("K7Q", "allow_once", "C1:200.1")
    assert (message.text, message.sender_id, message.sender_name) == ("Allow once", "U1", "olive")
    assert message.chat.session_key == "slack:C1:190.0" and message.mentioned and not message.is_direct
    assert message.platform_message_id == "C1:200.1#press:201.5" and message.server_id == "T1"
    assert parse_press(block_actions(channel="D5")).chat.session_key == "slack:D5"


def test_buttons_relaybot_did_not_render_are_not_presses() -> None:
    assert parse_press(block_actions(block_id="someone-else")) is None
    assert parse_press({**block_actions(), "actions": []}) is None


def test_a_slash_command_reads_as_the_command_text() -> None:
    body = {"user_id": "U1", "user_name": "olive", "channel_id": "D5", "channel_name": "directmessage"}
    message = parse_slash_command({**body, "command": "/model", "text": "fast", "trigger_id": "3.3", "team_id": "T"})
    assert (message.text, message.is_direct, message.mentioned) == ("/model fast", True, True)
    assert message.platform_message_id == "D5:command:3.3" and message.chat.session_key == "slack:D5"
    renamed = parse_slash_command({**body, "command": "/relaybot-status", "channel_id": "C9", "channel_name": "x"})
    assert (renamed.text, renamed.is_direct) == ("/status", False)


def test_reserved_command_names_are_renamed_and_read_back() -> None:
    assert [slash_name(n) for n in ("new", "status", "help", "model")] == [
        "new",
        "relaybot-status",
        "relaybot-help",
        "model",
    ]
    assert [command_name(c) for c in ("/new", "/relaybot-status", "/relaybot-new", "/STOP")] == [
        "new",
        "status",
        "relaybot-new",
        "stop",
    ]
