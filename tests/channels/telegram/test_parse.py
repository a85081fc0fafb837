from bot.bus import Press
from channels.telegram.channel import file_base_url
from channels.telegram.parse import QUOTE_LIMIT, album_of, media_of, parse_update, replied_image

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


def test_a_bare_group_command_is_addressed_to_the_bot_only_when_its_menu_offers_it() -> None:
    def command(text: str) -> dict:
        entity = {"type": "bot_command", "offset": 0, "length": len(text.split()[0])}
        return update(text, chat={"id": -100, "type": "group"}, entities=[entity])

    menu = frozenset({"model", "new"})
    assert parse_update(command("/model big"), BOT_ID, "relay_bot", menu).mentioned
    assert not parse_update(command("/weather today"), BOT_ID, "relay_bot", menu).mentioned
    assert not parse_update(command("/model@other_bot"), BOT_ID, "relay_bot", menu).mentioned
    assert not parse_update(command("/model"), BOT_ID, "relay_bot").mentioned


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
    assert parse_update({"update_id": 3, "channel_post": update()["message"]}, BOT_ID, "relay_bot") is None


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


GROUP = {"id": -100, "type": "supergroup"}


def earlier(message_id: int = 3, user: dict | None = None, **content: object) -> dict:
    author = user or {"id": 7, "is_bot": False, "first_name": "Bo"}
    return {"message_id": message_id, "date": 0, "chat": GROUP, "from": author, **content}


def test_a_reply_carries_the_replied_to_text_and_author() -> None:
    raw = update("why?", chat=GROUP, reply_to_message=earlier(text="the sky is green"))
    quote = parse_update(raw, BOT_ID, "relay_bot").reply_to
    assert (quote.text, quote.author_id, quote.author_name, quote.from_bot) == ("the sky is green", "7", "Bo", False)
    assert quote.platform_message_id == "3" and quote.image is None


def test_a_partial_quote_wins_over_the_whole_text() -> None:
    raw = update("source?", chat=GROUP, reply_to_message=earlier(text="one. two. three."), quote={"text": "two."})
    assert parse_update(raw, BOT_ID, "relay_bot").reply_to.text == "two."


def test_a_reply_to_the_bot_is_marked_as_the_bots_and_capped() -> None:
    bot = {"id": BOT_ID, "is_bot": True, "first_name": "Relay"}
    raw = update("go on", chat=GROUP, reply_to_message=earlier(user=bot, text="x" * 5000))
    message = parse_update(raw, BOT_ID, "relay_bot")
    assert message.mentioned and message.reply_to.from_bot
    assert len(message.reply_to.text) == QUOTE_LIMIT and message.reply_to.text.endswith("…")


def test_a_forum_topics_root_is_not_a_reply() -> None:
    root = earlier(message_id=77, forum_topic_created={"name": "Ideas", "icon_color": 0})
    raw = update("hi", chat=GROUP, message_thread_id=77, is_topic_message=True, reply_to_message=root)
    message = parse_update(raw, BOT_ID, "relay_bot")
    assert message.reply_to is None and message.chat.thread_id == "77"


def test_a_quote_from_another_chat_names_its_origin() -> None:
    origin = {"type": "user", "date": 0, "sender_user": {"id": 8, "is_bot": False, "first_name": "Cy"}}
    raw = update("see this", external_reply={"origin": origin}, quote={"text": "a quoted line"})
    quote = parse_update(raw, BOT_ID, "relay_bot").reply_to
    assert (quote.text, quote.author_name, quote.author_id) == ("a quoted line", "Cy", None)


def test_the_replied_to_photo_is_found_for_download() -> None:
    photo = [{"file_id": "p1", "file_unique_id": "u1", "width": 9, "height": 9}]
    raw = update("what is it?", reply_to_message=earlier(photo=photo, caption="my cat"))
    assert parse_update(raw, BOT_ID, "relay_bot").reply_to.text == "my cat"
    assert replied_image(raw["message"]).source == "p1"
    assert replied_image(update()["message"]) is None


def test_an_edit_replaces_its_message_under_a_new_id_per_version() -> None:
    body = {**update("fixed text")["message"], "edit_date": 1700}
    message = parse_update({"update_id": 9, "edited_message": body}, BOT_ID, "relay_bot")
    assert (message.text, message.edit_of, message.platform_message_id) == ("fixed text", "5", "5@1700")


def test_album_parts_name_their_album_and_edits_never_do() -> None:
    raw = update(media_group_id="13579")
    assert album_of(raw) == "13579"
    assert album_of({"update_id": 2, "edited_message": raw["message"]}) is None


def test_a_button_press_becomes_a_press_with_the_buttons_label() -> None:
    keyboard = {"inline_keyboard": [[{"text": "Allow once", "callback_data": "K7Q:once"}]]}
    shown = {"message_id": 31, "date": 0, "chat": GROUP, "from": {"id": BOT_ID, "is_bot": True, "first_name": "R"}}
    query = {
        "id": "cbq-1",
        "from": {"id": 42, "is_bot": False, "first_name": "Ann"},
        "message": {**shown, "text": "Run ls?", "reply_markup": keyboard},
        "chat_instance": "1",
        "data": "K7Q:once",
    }
    message = parse_update({"update_id": 4, "callback_query": query}, BOT_ID, "relay_bot")
    assert message.press == Press("K7Q", "once", "31")
    assert (message.text, message.sender_id, message.chat.chat_id) == ("Allow once", "42", "-100")
    assert message.mentioned and not message.is_direct and message.platform_message_id == "press:cbq-1"
    foreign = {**query, "data": "not-ours"}
    assert parse_update({"update_id": 5, "callback_query": foreign}, BOT_ID, "relay_bot") is None
