"""The sent-replies record the platforms share: which bot messages answered which user message, bounded."""

from channels.sent_replies import SentReplies


def test_sent_replies_remember_the_latest_user_messages() -> None:
    replies: SentReplies[str] = SentReplies(limit=2)
    replies.add("u1", "b1")
    replies.add("u1", "b2")
    replies.add("u2", "b3")
    replies.discard("u1", "b2")
    assert replies.of("u1") == ["b1"]
    replies.add("u3", "b4")
    assert replies.of("u1") == [] and replies.of("u3") == ["b4"]
    replies.replace("u3", ["b5"])
    assert replies.of("u3") == ["b5"]


def test_a_reply_message_is_recorded_once_and_a_key_may_name_the_chat_too() -> None:
    replies: SentReplies[tuple[str, str]] = SentReplies()
    replies.add(("-100", "7"), "70")
    replies.add(("-100", "7"), "70")
    replies.add(("-200", "7"), "71")
    assert replies.of(("-100", "7")) == ["70"] and replies.of(("-200", "7")) == ["71"]


def test_answering_again_makes_a_user_message_the_newest() -> None:
    replies: SentReplies[str] = SentReplies(limit=2)
    replies.add("u1", "b1")
    replies.add("u2", "b2")
    replies.add("u1", "b3")
    replies.add("u3", "b4")
    assert replies.of("u1") == ["b1", "b3"] and replies.of("u2") == []
