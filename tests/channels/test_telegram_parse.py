from channels.telegram import file_base_url, media_of, parse_update

BOT_ID = 999


def update(text: str = "hi", chat: dict | None = None, **message: object) -> dict:
    body = {
        "message_id": 5,
        "date": 0,
        "chat": chat or {"id": 42, "type": "private"},
        "from": {"id": 42, "is_bot": False, "first_name": "Ann", "last_name": "Lee"},
        "text": text,
        **message,
    }
    return {"update_id": 1, "message": body}


def test_private_text_message() -> None:
    message = parse_update(update(), BOT_ID, "relay_bot")
    assert message is not None
    assert message.chat.session_key == "telegram:42"
    assert (message.sender_id, message.sender_name, message.text) == ("42", "Ann Lee", "hi")
    assert message.is_direct and message.platform_message_id == "5"


def test_group_mention_is_detected_and_stripped() -> None:
    text = "hey @Relay_Bot what's up"
    raw = update(
        text, chat={"id": -100, "type": "supergroup"}, entities=[{"type": "mention", "offset": 4, "length": 10}]
    )
    message = parse_update(raw, BOT_ID, "relay_bot")
    assert message.mentioned and not message.is_direct
    assert message.text == "hey what's up"


def test_reply_to_the_bot_counts_as_a_mention() -> None:
    raw = update(
        chat={"id": -100, "type": "group"},
        reply_to_message={
            "message_id": 1,
            "date": 0,
            "chat": {"id": -100, "type": "group"},
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "R"},
        },
    )
    assert parse_update(raw, BOT_ID, "relay_bot").mentioned


def test_plain_group_message_is_not_a_mention() -> None:
    assert not parse_update(update(chat={"id": -100, "type": "group"}), BOT_ID, "relay_bot").mentioned


def test_forum_topic_is_its_own_session() -> None:
    raw = update(chat={"id": -100, "type": "supergroup", "is_forum": True}, message_thread_id=77, is_topic_message=True)
    assert parse_update(raw, BOT_ID, "relay_bot").chat.session_key == "telegram:-100:77"


def test_command_addressed_to_the_bot_loses_its_suffix() -> None:
    raw = update(
        "/new@relay_bot",
        chat={"id": -100, "type": "group"},
        entities=[{"type": "bot_command", "offset": 0, "length": 14}],
    )
    message = parse_update(raw, BOT_ID, "relay_bot")
    assert message.text == "/new" and message.mentioned


def test_bots_and_service_messages_are_skipped() -> None:
    bot_update = update()
    bot_update["message"]["from"]["is_bot"] = True
    assert parse_update(bot_update, BOT_ID, "relay_bot") is None
    service = update()
    del service["message"]["text"]
    assert parse_update(service, BOT_ID, "relay_bot") is None
    assert parse_update({"update_id": 3, "edited_message": update()["message"]}, BOT_ID, "relay_bot") is None


def test_photo_uses_the_largest_size_and_caption() -> None:
    sizes = [
        {"file_id": "small", "file_unique_id": "s", "width": 90, "height": 90},
        {"file_id": "big", "file_unique_id": "b", "width": 800, "height": 800, "file_size": 1234},
    ]
    raw = update(photo=sizes, caption="look")
    del raw["message"]["text"]
    message = parse_update(raw, BOT_ID, "relay_bot")
    assert message.text == "look"
    media = media_of(raw["message"])
    assert (media.source, media.kind, media.size) == ("big", "image", 1234)


def test_voice_and_document_media() -> None:
    voice = media_of({"voice": {"file_id": "v", "file_unique_id": "vu", "duration": 2}})
    assert (voice.kind, voice.mime_type) == ("voice", "audio/ogg")
    doc = media_of(
        {"document": {"file_id": "d", "file_unique_id": "du", "mime_type": "application/pdf", "file_name": "a.pdf"}}
    )
    assert (doc.kind, doc.name) == ("file", "a.pdf")


def test_file_base_url_follows_the_api_base() -> None:
    assert file_base_url("https://api.telegram.org/bot") == "https://api.telegram.org/file/bot"
    assert file_base_url("http://127.0.0.1:8081/bot/") == "http://127.0.0.1:8081/file/bot"


def test_mention_offsets_count_utf16_units() -> None:
    text = "\U0001f600 @relay_bot hi"
    raw = update(text, chat={"id": -100, "type": "group"}, entities=[{"type": "mention", "offset": 3, "length": 10}])
    message = parse_update(raw, BOT_ID, "relay_bot")
    assert message.mentioned and message.text == "\U0001f600 hi"
