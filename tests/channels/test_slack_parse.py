from typing import Any

from channels.slack_parse import files_of, parse_event

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
