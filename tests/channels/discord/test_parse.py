from dataclasses import replace
from types import SimpleNamespace

import discord

from bot.errors import ChannelError, ChannelUnavailable, RateLimited
from channels.discord.calls import translate_error
from channels.discord.parse import QUOTE_LIMIT, DiscordMessage, attachment_ref, parse_edit, parse_message, quoted_image
from channels.discord.send import chunk_nonce

BOT_ID = 900
DM = DiscordMessage(
    id=10,
    channel_id=20,
    guild_id=None,
    thread_parent_id=None,
    type=0,
    author_id=42,
    author_name="Ann",
    author_is_bot=False,
    content="hi",
)
IN_GUILD = replace(DM, guild_id=30)


def test_direct_message() -> None:
    message = parse_message(DM, BOT_ID)
    assert message is not None and message.chat.session_key == "discord:20"
    assert (message.sender_id, message.sender_name, message.text) == ("42", "Ann", "hi")
    assert message.is_direct and not message.mentioned and message.platform_message_id == "10"


def test_guild_mention_is_detected_and_removed() -> None:
    raw = replace(IN_GUILD, content="<@900> what's up, <@!77>?", mentions=((BOT_ID, "Relay"), (77, "Bo")))
    message = parse_message(raw, BOT_ID)
    assert message.mentioned and not message.is_direct
    assert message.text == "what's up, @Bo?"


def test_a_reply_to_the_bot_counts_as_a_mention() -> None:
    answer = replace(IN_GUILD, id=5, author_id=BOT_ID, author_is_bot=True, content="hello")
    assert parse_message(replace(IN_GUILD, type=19, reference_id=5, replied=answer), BOT_ID).mentioned
    other = replace(answer, author_id=77, author_is_bot=False)
    assert not parse_message(replace(IN_GUILD, type=19, reference_id=5, replied=other), BOT_ID).mentioned


def test_a_thread_is_a_session_of_its_own_under_its_channel() -> None:
    message = parse_message(replace(IN_GUILD, channel_id=55, thread_parent_id=20), BOT_ID)
    assert (message.chat.chat_id, message.chat.thread_id) == ("20", "55")
    assert message.chat.session_key == "discord:20:55"


def test_bots_notices_and_empty_messages_are_skipped() -> None:
    assert parse_message(replace(DM, author_is_bot=True), BOT_ID) is None
    assert parse_message(replace(DM, author_id=BOT_ID), BOT_ID) is None
    assert parse_message(replace(DM, type=7), BOT_ID) is None  # a member joined
    assert parse_message(replace(IN_GUILD, content="<@900>", mentions=((BOT_ID, "Relay"),)), BOT_ID) is None


def test_a_message_with_only_a_file_is_kept() -> None:
    file = attachment_ref(5, "scan.pdf", "application/pdf", 100, False)
    assert parse_message(replace(DM, content="", files=(file,)), BOT_ID).text == ""


def test_attachment_kinds_and_types() -> None:
    image = attachment_ref(1, "cat.png", "image/png", 10, False)
    assert (image.kind, image.mime_type, image.source, image.name) == ("image", "image/png", "1", "cat.png")
    assert attachment_ref(2, "notes.txt", "text/plain; charset=utf-8", 10, False).mime_type == "text/plain"
    assert attachment_ref(3, "photo.jpg", None, 10, False).kind == "image"
    assert attachment_ref(4, "voice-message.ogg", "audio/ogg", 10, True).kind == "voice"


def test_chunk_nonces_are_stable_distinct_and_short() -> None:
    nonces = {chunk_nonce("a" * 32, index) for index in range(50)}
    assert len(nonces) == 50 and all(len(n) <= 25 for n in nonces)
    assert chunk_nonce("m1", 0) == chunk_nonce("m1", 0) != chunk_nonce("m2", 0)


def http_error(status: int, body: dict | str, headers: dict | None = None) -> discord.HTTPException:
    response = SimpleNamespace(status=status, reason="reason", headers=headers or {})
    return discord.HTTPException(response, body)


def test_discord_errors_are_translated() -> None:
    body = {"message": "You are being rate limited.", "code": 0}
    limited = translate_error(http_error(429, body, {"Retry-After": "3"}))
    assert isinstance(limited, RateLimited) and limited.retry_after == 3.0
    assert isinstance(translate_error(discord.RateLimited(42.0)), RateLimited)
    assert isinstance(translate_error(http_error(503, "upstream down")), ChannelUnavailable)
    too_long = translate_error(http_error(400, {"message": "Invalid Form Body", "code": 50035}))
    assert type(too_long) is ChannelError and "50035" in str(too_long)
    assert "token" in str(translate_error(discord.LoginFailure("Improper token has been passed.")))
    assert isinstance(translate_error(ConnectionResetError("reset by peer")), ChannelUnavailable)


def test_a_reply_quotes_the_replied_to_message_cut_at_a_thousand_characters() -> None:
    replied = replace(IN_GUILD, id=5, author_id=77, author_name="Bo", content="<@900> " + "y" * 1500)
    quote = parse_message(replace(IN_GUILD, type=19, reference_id=5, replied=replied), BOT_ID).reply_to
    assert quote is not None and len(quote.text) == QUOTE_LIMIT and quote.text.endswith("…")
    assert (quote.author_id, quote.author_name, quote.from_bot, quote.platform_message_id) == ("77", "Bo", False, "5")
    assert quote.image is None  # the adapter downloads it


def test_the_quoted_image_is_the_first_image_of_the_replied_to_message() -> None:
    pdf = attachment_ref(1, "a.pdf", "application/pdf", 10, False)
    png = attachment_ref(2, "b.png", "image/png", 10, False)
    assert quoted_image(replace(DM, files=(pdf, png))) == png
    assert quoted_image(replace(DM, files=(pdf,))) is None


def test_an_edit_names_the_original_and_carries_a_versioned_id() -> None:
    edit = parse_edit(replace(DM, content="hi again", edited_at=1700000000123), BOT_ID)
    assert edit is not None and (edit.edit_of, edit.platform_message_id, edit.text) == (
        "10",
        "10@1700000000123",
        "hi again",
    )
    assert parse_edit(DM, BOT_ID) is None  # an update no one made (an embed resolved)
    assert parse_edit(replace(DM, author_is_bot=True, edited_at=1), BOT_ID) is None
