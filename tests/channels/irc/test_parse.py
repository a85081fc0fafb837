"""IRC lines as InboundMessages: private messages are direct, channel lines mention the bot only when addressed."""

from bot.errors import ChannelError, ChannelUnavailable, RateLimited
from channels.irc.calls import send_error
from channels.irc.parse import Line, address_of, parse_line


def test_a_private_message_is_direct_and_mentions_the_bot() -> None:
    message = parse_line(Line("alice", "relaybot", "hello"), "relaybot", "irc.example.org")
    assert message is not None and message.is_direct and message.mentioned
    assert (message.chat.chat_id, message.sender_id, message.text, message.server_id) == (
        "alice",
        "alice",
        "hello",
        None,
    )


def test_a_channel_line_addressed_by_nick_mentions_the_bot_without_the_address() -> None:
    message = parse_line(Line("alice", "#room", "RelayBot: what now?"), "relaybot", "irc.example.org")
    assert message is not None and not message.is_direct and message.mentioned
    assert (message.chat.chat_id, message.text, message.server_id) == ("#room", "what now?", "irc.example.org")


def test_a_channel_line_not_addressed_to_the_bot_is_not_a_mention() -> None:
    message = parse_line(Line("alice", "#room", "relaybots are fun"), "relaybot", "irc.example.org")
    assert message is not None and not message.mentioned


def test_the_nick_anywhere_as_a_word_is_a_mention() -> None:
    assert address_of("what does relaybot think?", "relaybot") == (True, "what does relaybot think?")
    assert address_of("@relaybot hi", "relaybot") == (True, "hi")
    assert address_of("relaybot, hi", "relaybot") == (True, "hi")


def test_formatting_codes_are_dropped_and_actions_read_as_emotes() -> None:
    bold = parse_line(Line("alice", "relaybot", "\x02hi\x02 \x0304red\x03"), "relaybot", "net")
    action = parse_line(Line("alice", "relaybot", "\x01ACTION waves\x01"), "relaybot", "net")
    assert bold is not None and bold.text == "hi red"
    assert action is not None and action.text == "* alice waves"


def test_own_lines_ctcp_queries_and_empty_text_are_not_messages() -> None:
    assert parse_line(Line("RelayBot", "#room", "hi"), "relaybot", "net") is None
    assert parse_line(Line("alice", "relaybot", "\x01VERSION\x01"), "relaybot", "net") is None
    assert parse_line(Line("alice", "relaybot", "\x02\x02 "), "relaybot", "net") is None


def test_a_dcc_file_offer_tells_the_model_the_file_was_not_received() -> None:
    message = parse_line(Line("alice", "relaybot", "\x01DCC SEND notes.txt 2130706433 5000 24\x01"), "relaybot", "n")
    assert message is not None and "notes.txt (24 bytes)" in message.text and "not received" in message.text


def test_too_fast_names_its_wait_try_again_is_transient_and_refusals_are_final() -> None:
    limited = send_error("439", ["bot", "#room", "Target change too fast. Please wait 104 seconds."])
    again = send_error("263", ["bot", "PRIVMSG", "Please wait a while and try again."])
    refused = send_error("404", ["bot", "#room", "Cannot send to channel"])
    assert isinstance(limited, RateLimited) and limited.retry_after == 104
    assert isinstance(again, ChannelUnavailable) and not isinstance(again, RateLimited)
    assert type(refused) is ChannelError and refused.code == "404" and "Cannot send to channel" in str(refused)
