"""XMPP messages as InboundMessages: one-to-one chats are direct, room messages mention the bot only by nick."""

from bot.errors import ChannelError, ChannelUnavailable
from channels.xmpp.calls import stanza_error
from channels.xmpp.parse import Stanza, mentions, parse_stanza, shared_file

BOT, NICK = "bot@example.org", "bot"


def test_a_one_to_one_message_is_direct_from_the_bare_jid() -> None:
    message = parse_stanza(Stanza("chat", "ann@example.org", "hello", "m1"), BOT, NICK)
    assert message is not None and message.is_direct and message.mentioned
    assert (message.chat.chat_id, message.sender_id, message.platform_message_id) == ("ann@example.org",) * 2 + ("m1",)


def test_a_room_message_mentions_the_bot_by_nick_and_names_the_real_jid_where_shown() -> None:
    stanza = Stanza("groupchat", "room@muc.example.org", "bot: what now?", "m2", "ann", "ann@example.org")
    message = parse_stanza(stanza, BOT, NICK)
    assert message is not None and not message.is_direct and message.mentioned
    assert (message.text, message.sender_id, message.server_id) == ("what now?", "ann@example.org", "muc.example.org")


def test_an_anonymous_occupant_is_known_by_room_and_nick() -> None:
    message = parse_stanza(Stanza("groupchat", "room@muc.example.org", "chatting", "m3", "ann"), BOT, NICK)
    assert message is not None and not message.mentioned and message.sender_id == "room@muc.example.org/ann"


def test_own_room_echo_history_and_empty_bodies_are_not_messages() -> None:
    assert parse_stanza(Stanza("groupchat", "room@muc.example.org", "hi", "m", "Bot"), BOT, NICK) is None
    assert parse_stanza(Stanza("groupchat", "room@muc.example.org", "old", "m", "ann", delayed=True), BOT, NICK) is None
    assert parse_stanza(Stanza("chat", "ann@example.org", "  "), BOT, NICK) is None


def test_a_correction_is_an_edit_of_the_original() -> None:
    message = parse_stanza(Stanza("chat", "ann@example.org", "fixed", "m5", replaces="m4"), BOT, NICK)
    assert message is not None and message.edit_of == "m4"


def test_the_nick_as_a_word_is_a_mention_and_a_longer_word_is_not() -> None:
    assert mentions("what does bot think?", "bot") == (True, "what does bot think?")
    assert mentions("robots everywhere", "bot")[0] is False


def test_a_wait_error_is_transient_and_others_are_final() -> None:
    waiting = stanza_error("wait", "resource-constraint", "slow down")
    refused = stanza_error("cancel", "not-acceptable", "not in the room")
    assert isinstance(waiting, ChannelUnavailable) and waiting.code == "resource-constraint"
    assert type(refused) is ChannelError and refused.code == "not-acceptable"


def test_a_message_that_is_just_its_link_shares_a_file_named_by_the_url() -> None:
    link = "http://127.0.0.1:5280/file_share/Abc/launch%20notes.txt"
    media = shared_file(Stanza("chat", "owner@localhost", link, "m1", link=link))
    assert media is not None and (media.name, media.mime_type, media.kind) == ("launch notes.txt", "text/plain", "file")
    assert media.source == link and media.filename == "m1.txt"


def test_a_link_with_words_around_it_or_no_http_url_shares_no_file() -> None:
    link = "http://127.0.0.1:5280/file_share/Abc/photo.png"
    assert shared_file(Stanza("chat", "owner@localhost", f"look: {link}", "m1", link=link)) is None
    assert shared_file(Stanza("chat", "owner@localhost", "file:///etc/passwd", "m2", link="file:///etc/passwd")) is None
    assert shared_file(Stanza("chat", "owner@localhost", link, "m3")) is None
