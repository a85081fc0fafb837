"""The fake Telegram Bot API, driven by the real python-telegram-bot."""

import asyncio
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from telegram import Bot, Message, MessageEntity, ReplyParameters, Update
from telegram.constants import ParseMode
from telegram.error import BadRequest, EndPointNotFound, Forbidden, InvalidToken, NetworkError, RetryAfter
from telegram.ext import Application, CommandHandler, ContextTypes, MessageHandler, filters
from telegram.request import HTTPXRequest

from tests.fakes.telegram_html import html_visible_text
from tests.fakes.telegram_payloads import auto_entities
from tests.fakes.telegram_server import FakeTelegram, Upload


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


def plain_http() -> HTTPXRequest:
    """PTB's default transport minus the CA bundle, which costs ~0.1 s per client and is moot on plain HTTP."""
    return HTTPXRequest(httpx_kwargs={"verify": False})


def make_bot(fake: FakeTelegram, token: str | None = None) -> Bot:
    return Bot(
        token or fake.token,
        base_url=fake.base_url,
        base_file_url=fake.base_file_url,
        request=plain_http(),
        get_updates_request=plain_http(),
    )


@pytest_asyncio.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    async with make_bot(fake) as client:
        yield client


def build_app(fake: FakeTelegram) -> Application:
    builder = Application.builder().token(fake.token).base_url(fake.base_url).base_file_url(fake.base_file_url)
    return builder.request(plain_http()).get_updates_request(plain_http()).build()


async def test_get_me_describes_the_fake_bot(fake: FakeTelegram, bot: Bot) -> None:
    me = await bot.get_me()

    assert (me.id, me.username, me.first_name, me.is_bot) == (999, "relay_bot", "Relay", True)
    assert me.can_read_all_group_messages is False
    assert [name for name, _ in fake.calls] == ["getMe", "getMe"]  # Bot.__aenter__ calls it too


async def test_send_message_is_recorded_and_echoed_as_a_message(fake: FakeTelegram, bot: Bot) -> None:
    message = await bot.send_message(42, "<b>bold</b> &amp; plain", parse_mode=ParseMode.HTML)

    assert message.text == "bold & plain"
    assert message.chat.id == 42
    assert message.from_user.id == 999
    assert fake.sent == [
        {"chat_id": 42, "text": "<b>bold</b> &amp; plain", "parse_mode": "HTML", "message_id": message.message_id}
    ]


async def test_free_text_fields_are_not_json_decoded(fake: FakeTelegram, bot: Bot) -> None:
    await bot.send_message(42, "42")
    await bot.send_message(42, '"quoted"')

    assert [entry["text"] for entry in fake.sent] == ["42", '"quoted"']


async def test_reply_and_topic_are_echoed_and_recorded(fake: FakeTelegram, bot: Bot) -> None:
    update = fake.text("question", chat_id=-100, chat_type="supergroup", thread_id=7)
    asked = update["message"]["message_id"]

    message = await bot.send_message(-100, "answer", message_thread_id=7, reply_parameters=ReplyParameters(asked))

    assert message.reply_to_message.text == "question"
    assert message.message_thread_id == 7 and message.is_topic_message
    assert fake.sent[0]["reply_parameters"] == {"message_id": asked}
    assert fake.sent[0]["message_thread_id"] == 7


async def test_user_reply_to_the_bot_quotes_its_last_message(fake: FakeTelegram, bot: Bot) -> None:
    answer = await bot.send_message(42, "What's your name?")

    update = fake.text("Ann", reply_to_bot=True)

    replied = update["message"]["reply_to_message"]
    assert (replied["message_id"], replied["from"]["id"], replied["text"]) == (answer.message_id, 999, answer.text)
    assert update["message"]["message_id"] > answer.message_id


async def test_replying_to_an_unknown_message_is_rejected(bot: Bot) -> None:
    with pytest.raises(BadRequest, match="replied not found"):
        await bot.send_message(42, "answer", reply_parameters=ReplyParameters(12345))


@pytest.mark.parametrize(
    ("markup", "reason"),
    [
        ("a < b", 'unsupported start tag "" at byte offset 2'),
        ("line<br>break", 'unsupported start tag "br" at byte offset 4'),
        ("<b>open", 'can\'t find end tag corresponding to start tag "b"'),
        ("<b>x</i>", 'unmatched end tag at byte offset 4, expected "</b>", found "</i>"'),
        ("<b><i>x</b></i>", "unmatched end tag"),
        ("x</b>", "unexpected end tag at byte offset 1"),
        ("<span>x</span>", 'tag "span" must have class "tg-spoiler"'),
        ("é<b", "unclosed start tag at byte offset 2"),
        ("<a href=https://example.com>x</a>", "unexpected end of name token at byte offset 8"),
        ("<b bold>x</b>", 'expected equal sign in declaration of an attribute of the tag "b"'),
    ],
)
async def test_html_telegram_cannot_parse_is_rejected(bot: Bot, markup: str, reason: str) -> None:
    with pytest.raises(BadRequest) as caught:
        await bot.send_message(42, markup, parse_mode=ParseMode.HTML)

    assert "can't parse entities" in caught.value.message.lower()
    assert reason in caught.value.message.lower()


@pytest.mark.parametrize(
    ("markup", "visible"),
    [
        ('<a href="https://example.com/?a=1&amp;b=2">link</a>', "link"),
        ("&lt;tag&gt; &quot;q&quot; &amp; &#65;&#x42;", '<tag> "q" & AB'),
        ("a & b &nbsp;", "a & b &nbsp;"),  # Telegram keeps what isn't an entity it knows
        ("<blockquote expandable>quote</blockquote>", "quote"),
        ('<pre><code class="language-python">x = 1</code></pre>', "x = 1"),
        ('<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler><B>u</B>', "stu"),
        ("<b>x</>", "x"),
    ],
)
def test_html_telegram_accepts_becomes_its_visible_text(markup: str, visible: str) -> None:
    assert html_visible_text(markup) == visible


async def test_text_over_4096_visible_characters_is_rejected(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        await bot.send_message(42, "x" * 4097)

    await bot.send_message(42, "<b>" + "&amp;" * 4096 + "</b>", parse_mode=ParseMode.HTML)  # tags don't count
    assert len(fake.sent) == 1


async def test_empty_text_is_rejected(bot: Bot) -> None:
    with pytest.raises(BadRequest, match="(?i)text is empty"):
        await bot.send_message(42, "<b> </b>", parse_mode=ParseMode.HTML)


async def test_edit_that_changes_nothing_is_rejected(fake: FakeTelegram, bot: Bot) -> None:
    message = await bot.send_message(42, "draft")

    edited = await bot.edit_message_text("final", chat_id=42, message_id=message.message_id)
    with pytest.raises(BadRequest, match="(?i)message is not modified"):
        await bot.edit_message_text("final", chat_id=42, message_id=message.message_id)

    assert isinstance(edited, Message) and edited.text == "final"
    with pytest.raises(BadRequest, match="(?i)message to edit not found"):
        await bot.edit_message_text("x", chat_id=42, message_id=999_999)


@pytest.mark.filterwarnings("ignore:.*retry_after.*:telegram.warnings.PTBDeprecationWarning")
async def test_injected_429_raises_retry_after_then_succeeds(fake: FakeTelegram, bot: Bot) -> None:
    fake.fail("sendMessage", retry_after=3)

    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(42, "hi")
    await bot.send_message(42, "hi again")

    assert caught.value.retry_after == 3  # an int until PTB_TIMEDELTA=true makes it a timedelta
    assert "Flood control exceeded" in caught.value.message
    assert [entry["text"] for entry in fake.sent] == ["hi again"]


async def test_injected_403_raises_forbidden(fake: FakeTelegram, bot: Bot) -> None:
    fake.fail("sendMessage", status=403, times=2)

    for _ in range(2):
        with pytest.raises(Forbidden, match="blocked by the user"):
            await bot.send_message(42, "hi")


async def test_down_answers_502_which_ptb_raises_as_network_error(fake: FakeTelegram, bot: Bot) -> None:
    fake.down = True
    with pytest.raises(NetworkError) as caught:
        await bot.send_message(42, "hi")
    fake.down = False
    await bot.send_message(42, "back")

    assert type(caught.value) is NetworkError
    assert [name for name, _ in fake.calls[-2:]] == ["sendMessage", "sendMessage"]  # the failed try is recorded
    assert caught.value.message.startswith("Bad Gateway (502). Parsing the server response")
    assert [entry["text"] for entry in fake.sent] == ["back"]


async def test_wrong_token_is_rejected_and_unknown_method_is_not_found(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(InvalidToken):
        async with make_bot(fake, token="1:WRONG"):
            pass
    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("launchRocket")


async def test_application_polling_receives_a_pushed_text_and_shuts_down_fast(fake: FakeTelegram) -> None:
    app = build_app(fake)
    received = asyncio.Event()

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await update.message.reply_text(f"echo: {update.message.text}")
        received.set()

    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, echo))
    await app.initialize()
    await app.start()
    await app.updater.start_polling()
    await fake.wait_for_call("getUpdates")  # the first long poll is now held
    fake.text("hello")
    await asyncio.wait_for(received.wait(), 5)
    sent = await fake.wait_for_sent(1)

    started = time.monotonic()
    await app.updater.stop()
    await app.stop()
    await app.shutdown()
    assert time.monotonic() - started < 1

    assert sent[0]["text"] == "echo: hello"
    assert [name for name, _ in fake.calls[:3]] == ["getMe", "deleteWebhook", "getUpdates"]
    assert fake.calls[-1] == ("getUpdates", {"timeout": 0, "offset": 2})  # the cleanup poll confirms update 1


async def test_command_update_has_a_bot_command_entity(fake: FakeTelegram) -> None:
    app = build_app(fake)
    args: list[list[str]] = []
    handled = asyncio.Event()

    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        args.append(list(context.args or []))
        handled.set()

    app.add_handler(CommandHandler("start", start))
    update = fake.text("/start@relay_bot pair 1234")
    async with app:  # initialize/shutdown only; start/stop stay explicit
        await app.start()
        await app.updater.start_polling()
        await asyncio.wait_for(handled.wait(), 5)
        await app.updater.stop()
        await app.stop()

    assert update["message"]["entities"] == [{"type": "bot_command", "offset": 0, "length": 16}]
    assert args == [["pair", "1234"]]


def test_mentions_are_found_with_utf16_offsets() -> None:
    text = "😀 hi @relay_bot and @ann!"

    entities = auto_entities(text)
    raw = {"message_id": 1, "date": 0, "chat": {"id": 1, "type": "group"}, "text": text, "entities": entities}
    message = Message.de_json(raw, bot=None)

    assert [e["type"] for e in entities] == ["mention", "mention"]
    assert list(message.parse_entities([MessageEntity.MENTION]).values()) == ["@relay_bot", "@ann"]


async def test_photo_file_downloads_through_get_file(fake: FakeTelegram, bot: Bot) -> None:
    content = b"\x89PNG fake image bytes"
    fake.photo(content, caption="look @relay_bot")

    (update,) = await bot.get_updates()
    largest = update.message.photo[-1]
    file = await bot.get_file(largest.file_id)

    assert update.message.caption_entities[0].type == MessageEntity.MENTION
    assert (largest.width, largest.file_size) == (1280, len(content))
    assert await file.download_as_bytearray() == content
    assert await (await bot.get_file(update.message.photo[0].file_id)).download_as_bytearray() != content


async def test_document_and_voice_files_download(fake: FakeTelegram, bot: Bot) -> None:
    fake.document(b"%PDF-1.7", file_name="report.pdf", mime_type="application/pdf", caption="read this")
    pushed_voice = fake.voice(b"OggS voice", duration=5)

    document_update, voice_update = await bot.get_updates()
    document, voice = document_update.message.document, voice_update.message.voice

    assert (document.file_name, document.mime_type, document_update.message.caption) == (
        "report.pdf",
        "application/pdf",
        "read this",
    )
    assert pushed_voice["message"]["voice"]["duration"] == 5  # PTB's .duration warns until PTB_TIMEDELTA is set
    assert await (await bot.get_file(document.file_id)).download_as_bytearray() == b"%PDF-1.7"
    assert await (await bot.get_file(voice.file_id)).download_as_bytearray() == b"OggS voice"
    with pytest.raises(BadRequest, match="(?i)invalid file_id"):
        await bot.get_file("nope")


async def test_uploaded_photo_and_document_are_recorded(fake: FakeTelegram, bot: Bot) -> None:
    photo = await bot.send_photo(42, photo=b"image bytes", caption="<i>chart</i>", parse_mode=ParseMode.HTML)
    await bot.send_document(42, document=b"a,b\n1,2\n", filename="data.csv")

    photo_sent, document_sent = await fake.wait_for_sent(2)
    assert photo.caption == "chart"
    assert isinstance(photo_sent["photo"], Upload) and photo_sent["photo"].content == b"image bytes"
    assert document_sent["document"].filename == "data.csv"
    assert await (await bot.get_file(photo.photo[-1].file_id)).download_as_bytearray() == b"image bytes"


async def test_getupdates_offset_confirms_earlier_updates(fake: FakeTelegram, bot: Bot) -> None:
    first, second = fake.text("one"), fake.text("two")

    assert [u.update_id for u in await bot.get_updates()] == [first["update_id"], second["update_id"]]
    assert [u.update_id for u in await bot.get_updates(offset=second["update_id"])] == [second["update_id"]]
    assert await bot.get_updates(offset=second["update_id"] + 1) == ()

    raw = {"message_id": 90, "date": 0, "chat": {"id": 42, "type": "private"}, "text": "raw"}
    assert fake.push({"update_id": 50, "message": raw})["update_id"] == 50
    assert fake.text("numbered after it")["update_id"] == 51


async def test_held_poll_is_released_by_a_push_by_down_and_by_stop(fake: FakeTelegram) -> None:
    url = f"{fake.base_url}{fake.token}/getUpdates"
    async with aiohttp.ClientSession() as session:

        async def poll(offset: int) -> tuple[int, str]:
            async with session.post(url, data={"timeout": "30", "offset": str(offset)}) as response:
                return response.status, await response.text()

        started = time.monotonic()
        held = asyncio.create_task(poll(0))
        await fake.wait_for_call("getUpdates", 1)
        fake.text("wake up")
        assert (await held)[0] == 200

        held = asyncio.create_task(poll(2))  # confirms update 1, then waits
        await fake.wait_for_call("getUpdates", 2)
        fake.down = True
        status, body = await held
        assert status == 502 and "<html>" in body
        fake.down = False

        held = asyncio.create_task(poll(2))
        await fake.wait_for_call("getUpdates", 3)
        await fake.stop()
        assert await held == (200, '{"ok": true, "result": []}')
        assert time.monotonic() - started < 1


async def test_held_poll_answers_empty_after_its_timeout(fake: FakeTelegram) -> None:
    async with aiohttp.ClientSession() as session:
        started = time.monotonic()
        async with session.post(f"{fake.base_url}{fake.token}/getUpdates", data={"timeout": "0.2"}) as response:
            assert await response.json() == {"ok": True, "result": []}
        assert 0.2 <= time.monotonic() - started < 1


async def test_restart_on_the_same_port_keeps_updates_and_records(fake: FakeTelegram, bot: Bot) -> None:
    await bot.send_message(42, "before")
    fake.text("queued")
    port = fake.port

    await fake.stop()
    await fake.start(port=port)

    (update,) = await bot.get_updates()
    assert (fake.port, update.message.text, fake.sent[0]["text"]) == (port, "queued", "before")


async def test_chat_actions_commands_and_reactions_are_accepted(fake: FakeTelegram, bot: Bot) -> None:
    message = fake.text("hi")["message"]

    await bot.send_chat_action(42, "typing")
    await bot.set_my_commands([("new", "Start over"), ("help", "Show help")])
    await bot.set_message_reaction(42, message["message_id"], "👍")
    await bot.delete_message(42, message["message_id"])

    assert fake.chat_actions == [{"chat_id": 42, "action": "typing"}]
    assert [command.command for command in await bot.get_my_commands()] == ["new", "help"]
    await bot.delete_my_commands()
    assert await bot.get_my_commands() == ()


async def test_wait_for_sent_times_out_saying_what_was_sent(fake: FakeTelegram, bot: Bot) -> None:
    await bot.send_message(42, "only one")

    with pytest.raises(TimeoutError, match="1 of 2 sent"):
        await fake.wait_for_sent(2, timeout=0.05)


async def test_an_edit_from_plain_text_to_the_same_text_in_html_is_not_modified(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(chat_id=42, text="fish & chips")
    with pytest.raises(BadRequest, match="(?i)message is not modified"):
        await bot.edit_message_text(chat_id=42, message_id=sent.message_id, text="fish &amp; chips", parse_mode="HTML")
    await bot.edit_message_text(
        chat_id=42, message_id=sent.message_id, text="<b>fish</b> &amp; chips", parse_mode="HTML"
    )
    assert len(fake.edits) == 1


async def test_reactions_outside_telegrams_set_are_refused(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(chat_id=42, text="hi")
    assert await bot.set_message_reaction(42, sent.message_id, "👀")
    with pytest.raises(BadRequest, match="(?i)reaction_invalid"):
        await bot.set_message_reaction(42, sent.message_id, "✅")
    assert [r["reaction"][0]["emoji"] for r in fake.reactions] == ["👀"]


async def test_a_press_and_an_edit_arrive_as_python_telegram_bot_reads_them(fake: FakeTelegram, bot: Bot) -> None:
    from telegram import InlineKeyboardButton, InlineKeyboardMarkup

    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Yes", callback_data="p:yes")]])
    sent = await bot.send_message(chat_id=42, text="Sure?", reply_markup=keyboard)
    fake.press(fake.message(42, sent.message_id), "p:yes")
    asked = fake.text("what is 2+2?")
    fake.edit(asked, "what is 2+3?")
    press, _, edit = await bot.get_updates(timeout=1)
    assert press.callback_query.data == "p:yes" and press.callback_query.message.reply_markup == keyboard
    assert await bot.answer_callback_query(press.callback_query.id)
    assert edit.edited_message.text == "what is 2+3?" and edit.edited_message.edit_date is not None
