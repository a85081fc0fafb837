"""Teams activities as bus messages."""

from typing import Any

from bot.bus import ChatRef
from channels.teams.parse import choice_data, conversation_of, parse_activity, plain_text

BOT = {"id": "28:app", "name": "Relay"}


def _activity(conversation: dict[str, Any], text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "1001",
        "serviceUrl": "https://smba.trafficmanager.net/teams/",
        "channelId": "msteams",
        "from": {"id": "29:ann", "name": "Ann"},
        "conversation": conversation,
        "recipient": BOT,
        "text": text,
        **extra,
    }


def test_personal_chat_is_direct_and_addressed() -> None:
    incoming = parse_activity(_activity({"id": "a:1", "conversationType": "personal"}))
    assert incoming is not None
    message = incoming.message
    assert (message.chat, message.sender_id, message.text) == (ChatRef("teams", "a:1"), "29:ann", "hi")
    assert message.is_direct and message.mentioned


def test_channel_message_is_mentioned_only_with_the_bots_mention_entity() -> None:
    conversation = {"id": "19:c@thread.tacv2;messageid=77", "conversationType": "channel"}
    mention = {"type": "mention", "mentioned": BOT, "text": "<at>Relay</at>"}
    data = {"team": {"id": "19:team"}}
    plain = parse_activity(_activity(conversation, "hello all", channelData=data))
    addressed = parse_activity(_activity(conversation, "<at>Relay</at> hello", entities=[mention], channelData=data))
    assert plain is not None and addressed is not None
    assert not plain.message.mentioned and not plain.message.is_direct
    assert addressed.message.mentioned and addressed.message.text == "hello"
    assert addressed.message.chat == ChatRef("teams", "19:c@thread.tacv2", "77")
    assert addressed.message.server_id == "19:team"
    assert conversation_of(addressed.message.chat) == conversation["id"]


def test_card_press_comes_back_as_the_choice() -> None:
    value = choice_data("p1", "yes", "Yes please")
    incoming = parse_activity(_activity({"id": "a:1", "conversationType": "personal"}, "", value=value, replyToId="9"))
    assert incoming is not None and incoming.message.press is not None
    press = incoming.message.press
    assert (press.prompt_id, press.choice_id, press.prompt_message_id) == ("p1", "yes", "9")
    assert incoming.message.text == "Yes please"


def test_file_in_personal_chat_is_its_download_url() -> None:
    attachment = {
        "contentType": "application/vnd.microsoft.teams.file.download.info",
        "name": "notes.txt",
        "content": {"downloadUrl": "https://x/dl", "uniqueId": "u1", "fileType": "txt"},
    }
    incoming = parse_activity(_activity({"id": "a:1", "conversationType": "personal"}, "", attachments=[attachment]))
    assert incoming is not None
    (media,) = incoming.media
    assert (media.source, media.name, media.mime_type) == ("https://x/dl", "notes.txt", "text/plain")


def test_the_bots_own_and_other_activity_types_are_skipped() -> None:
    own = _activity({"id": "a:1"}, **{"from": BOT})
    assert parse_activity(own) is None
    assert parse_activity({**_activity({"id": "a:1"}), "type": "conversationUpdate"}) is None


def test_plain_text_keeps_other_mentions_and_unescapes() -> None:
    assert plain_text("<at>Relay</at> ask <at>Bob</at> about 1 &lt; 2", "Relay") == "ask Bob about 1 < 2"
