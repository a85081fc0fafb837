"""Matrix room events as bus messages: mentions, threads, replies, edits, files, invites; junk dropped."""

from typing import Any

from channels.matrix.parse import Me, inviter_of, media_of, parse_event, quote_of, without_reply_fallback

ME = Me("@relay:example.org", "Relay")
ROOM = "!room:example.org"


def event(body: str = "hi", sender: str = "@olive:example.org", **content: Any) -> dict[str, Any]:
    return {
        "type": "m.room.message",
        "sender": sender,
        "event_id": "$e1",
        "origin_server_ts": 1700,
        "content": {"msgtype": "m.text", "body": body, **content},
    }


def test_a_message_names_its_room_sender_and_event() -> None:
    message = parse_event(ROOM, event("hello"), ME, is_direct=True)
    assert message is not None and message.chat.session_key == f"matrix:{ROOM}"
    assert (message.sender_id, message.text, message.platform_message_id) == ("@olive:example.org", "hello", "$e1")
    assert message.is_direct and message.server_id is None


def test_a_mention_is_the_user_id_the_display_name_or_m_mentions() -> None:
    def mentioned(body: str, **content: Any) -> bool:
        parsed = parse_event(ROOM, event(body, **content), ME, is_direct=False)
        assert parsed is not None and parsed.server_id == ROOM
        return parsed.mentioned

    assert mentioned("@relay:example.org: status?") and mentioned("relay, status?") and not mentioned("relaying")
    assert mentioned("status?", **{"m.mentions": {"user_ids": [ME.user_id]}}) and not mentioned("status?")


def test_a_thread_is_the_session_and_a_reply_is_a_quote_without_its_fallback() -> None:
    threaded = {
        "m.relates_to": {
            "rel_type": "m.thread",
            "event_id": "$root",
            "is_falling_back": True,
            "m.in_reply_to": {"event_id": "$prev"},
        }
    }
    message = parse_event(ROOM, event("in thread", **threaded), ME, is_direct=False)
    assert message is not None and message.chat.thread_id == "$root" and message.reply_to is None
    reply = {"m.relates_to": {"m.in_reply_to": {"event_id": "$q"}}}
    quoted = parse_event(ROOM, event("> <@bob:x> earlier\n\nmy answer", **reply), ME, is_direct=False)
    assert quoted is not None and quoted.text == "my answer" and quoted.reply_to is not None
    assert quoted.reply_to.platform_message_id == "$q"
    assert without_reply_fallback("plain") == "plain"


def test_an_edit_replaces_the_original_and_the_bots_own_messages_are_skipped() -> None:
    edit = {
        "m.new_content": {"msgtype": "m.text", "body": "fixed"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"},
    }
    message = parse_event(ROOM, event("* fixed", **edit), ME, is_direct=True)
    assert message is not None and (message.text, message.edit_of) == ("fixed", "$orig")
    assert message.platform_message_id == "$e1@1700"
    assert parse_event(ROOM, event("mine", sender=ME.user_id), ME, is_direct=True) is None


def test_malformed_and_foreign_events_are_dropped() -> None:
    assert parse_event(ROOM, {"type": "m.room.message"}, ME, True) is None
    assert parse_event(ROOM, {**event(), "content": "junk"}, ME, True) is None
    assert parse_event(ROOM, {**event(), "type": "m.room.topic"}, ME, True) is None
    assert parse_event(ROOM, event("   "), ME, True) is None
    assert parse_event(ROOM, event(msgtype="m.location"), ME, True) is None


def test_a_file_is_a_media_reference_in_the_repository() -> None:
    raw = event("notes.txt", msgtype="m.file", url="mxc://example.org/AbC", info={"mimetype": "text/plain", "size": 5})
    media = media_of(raw)
    assert media is not None and (media.source, media.name, media.size, media.kind) == (
        "mxc://example.org/AbC",
        "notes.txt",
        5,
        "file",
    )
    assert media.filename == "AbC.txt" and media_of(event("text")) is None
    message = parse_event(ROOM, raw, ME, True)
    assert message is not None and message.text == ""


def test_a_quote_knows_whether_the_bot_wrote_it() -> None:
    quote = quote_of({**event("my old answer", sender=ME.user_id), "event_id": "$mine"}, ME)
    assert (
        quote is not None and quote.from_bot and quote.text == "my old answer" and quote.platform_message_id == "$mine"
    )


def test_the_inviter_is_read_from_the_invite_state() -> None:
    state = [
        {
            "type": "m.room.member",
            "state_key": "@olive:example.org",
            "sender": "@olive:example.org",
            "content": {"membership": "join", "displayname": "Olive"},
        },
        {
            "type": "m.room.member",
            "state_key": ME.user_id,
            "sender": "@olive:example.org",
            "content": {"membership": "invite"},
        },
    ]
    assert inviter_of(state, ME) == ("@olive:example.org", "Olive")
    assert inviter_of(state[:1], ME) is None


def test_a_matrix_session_key_reads_back_as_its_room_and_thread() -> None:
    from bot.bus import ChatRef

    for chat in (ChatRef("matrix", ROOM), ChatRef("matrix", "!r:example.org:8448", "$root")):
        assert ChatRef.parse(chat.session_key) == chat
