"""signal-cli's events as messages: pure parsing."""

from channels.signal.parse import Me, author_and_timestamp, is_group, message_id, parse_receive, target

ME = Me("+4915100000099", "0b0b0b0b-1111-4222-8333-444444444444", "Relay")
ANN = "+4915100000042"
GROUP = "R3JvdXBJZEZvclRlc3RzMDEyMzQ1Njc4OUFCQ0Q="


def event(text: str, sender: str = ANN, **data: object) -> dict:
    message = {"timestamp": 1700000000123, "message": text, **data}
    envelope = {"sourceNumber": sender, "sourceUuid": "u-ann", "sourceName": "Ann", "timestamp": 1700000000123}
    return {"envelope": {**envelope, "dataMessage": message}, "account": ME.number}


def test_a_direct_message_is_direct_and_its_id_names_author_and_timestamp() -> None:
    incoming = parse_receive(event("hello"), ME)
    assert incoming is not None
    message = incoming.message
    assert message.is_direct and message.mentioned and message.chat.chat_id == ANN and message.sender_name == "Ann"
    assert message.platform_message_id == f"{ANN}:1700000000123"
    assert author_and_timestamp(message.platform_message_id) == (ANN, 1700000000123)


def test_a_group_message_mentions_the_bot_by_its_mention_by_uuid_or_by_name() -> None:
    group = {"groupId": GROUP, "groupName": "Team"}
    by_number = {"number": ME.number, "uuid": None, "start": 0, "length": 1}
    by_uuid = {"number": None, "uuid": ME.uuid, "start": 0, "length": 1}
    for mention in (by_number, by_uuid):
        incoming = parse_receive(event("\ufffc what now?", groupInfo=group, mentions=[mention]), ME)
        assert incoming is not None and incoming.message.mentioned and incoming.message.text == "what now?"
    named = parse_receive(event("relay, what now?", groupInfo=group), ME)
    unnamed = parse_receive(event("relaying the news", groupInfo=group), ME)
    assert named is not None and named.message.mentioned and not named.message.is_direct
    assert unnamed is not None and not unnamed.message.mentioned
    assert named.message.chat.chat_id == GROUP and named.message.server_id == GROUP


def test_mention_offsets_count_utf16_units_and_others_mentions_read_as_names() -> None:
    other = {"name": "Bob", "number": "+4915100000055", "start": 3, "length": 1}
    mine = {"number": ME.number, "start": 5, "length": 1}
    incoming = parse_receive(event("😀 \ufffc \ufffc hi", groupInfo={"groupId": GROUP}, mentions=[other, mine]), ME)
    assert incoming is not None and incoming.message.text == "😀 @Bob  hi" and incoming.message.mentioned


def test_a_quote_of_the_bots_message_is_a_reply_to_it_and_counts_as_a_mention() -> None:
    quote = {"id": 1699999999000, "authorNumber": ME.number, "text": "earlier answer"}
    incoming = parse_receive(event("and why?", groupInfo={"groupId": GROUP}, quote=quote), ME)
    assert incoming is not None
    reply_to = incoming.message.reply_to
    assert reply_to is not None and reply_to.from_bot and reply_to.text == "earlier answer"
    assert reply_to.platform_message_id == f"{ME.number}:1699999999000" and incoming.message.mentioned


def test_an_edit_names_the_message_it_replaces() -> None:
    edited = event("meet at 6")
    envelope = edited["envelope"]
    envelope["editMessage"] = {"targetSentTimestamp": 1700000000000, "dataMessage": envelope.pop("dataMessage")}
    incoming = parse_receive(edited, ME)
    assert incoming is not None and incoming.message.edit_of == f"{ANN}:1700000000000"


def test_own_messages_receipts_typing_and_reactions_are_skipped() -> None:
    assert parse_receive(event("mine", sender=ME.number), ME) is None
    assert parse_receive({"envelope": {"sourceNumber": ANN, "typingMessage": {"action": "STARTED"}}}, ME) is None
    assert parse_receive(event("", reaction={"emoji": "👍"}), ME) is None


def test_attachments_are_fetched_by_their_id() -> None:
    attachment = {"contentType": "image/jpeg", "filename": "cat.jpg", "id": "abc123.jpg", "size": 10}
    incoming = parse_receive(event("", attachments=[attachment]), ME)
    assert incoming is not None
    (media,) = incoming.media
    assert (media.source, media.kind, media.name) == ("abc123.jpg", "image", "cat.jpg")


def test_groups_are_addressed_by_group_id_and_people_by_number_or_uuid() -> None:
    assert is_group(GROUP) and not is_group(ANN) and not is_group("0b0b0b0b-1111-4222-8333-444444444444")
    assert target(GROUP) == {"groupId": GROUP} and target(ANN) == {"recipient": [ANN]}
    assert message_id(ANN, 5) == f"{ANN}:5"
