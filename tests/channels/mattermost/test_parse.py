"""Mattermost's events, presses and slash commands as messages: pure parsing."""

import json

from channels.mattermost.parse import parse_event, parse_press, parse_slash_command
from tests.fakes.mattermost_payloads import command_request, post, posted

BOT = "botbotbotbotbotbotbotbot00"


def event(text: str, channel_type: str = "O", root: str = "", mentions: list[str] | None = None, **extra: object):
    the_post = {**post("useruseruseruseruseruser00", "chanchanchanchanchanchan00", text, root), **extra}
    return posted("posted", the_post, channel_type, "@ann", "teamteamteamteamteamteam00", mentions)


def test_a_direct_post_is_direct_and_counts_as_a_mention() -> None:
    incoming = parse_event(event("hello", "D"), BOT, "relaybot")
    assert incoming is not None
    message = incoming.message
    assert message.is_direct and message.mentioned and message.text == "hello"
    assert message.sender_name == "ann" and message.server_id is None


def test_a_channel_post_is_mentioned_by_the_mentions_list_or_the_name() -> None:
    by_list = parse_event(event("@relaybot what now?", mentions=[BOT]), BOT, "relaybot")
    by_name = parse_event(event("hey @RelayBot, what now?"), BOT, "relaybot")
    not_at_all = parse_event(event("talking about relaybot"), BOT, "relaybot")
    assert by_list is not None and by_list.message.mentioned and by_list.message.text == "what now?"
    assert by_name is not None and by_name.message.mentioned
    assert not_at_all is not None and not not_at_all.message.mentioned
    assert by_list.message.server_id == "teamteamteamteamteamteam00"


def test_a_thread_reply_is_its_own_session_and_a_mention_where_the_bot_answered() -> None:
    root = "rootrootrootrootrootroot00"
    incoming = parse_event(event("and then?", root=root), BOT, "relaybot", {f"chanchanchanchanchanchan00:{root}"})
    assert incoming is not None
    assert incoming.message.chat.thread_id == root and incoming.message.mentioned


def test_with_reply_in_thread_a_top_level_channel_post_roots_its_own_thread() -> None:
    channel_post = parse_event(event("@relaybot hi", mentions=[BOT]), BOT, "relaybot", reply_in_thread=True)
    direct = parse_event(event("hi", "D"), BOT, "relaybot", reply_in_thread=True)
    assert channel_post is not None and direct is not None
    assert channel_post.message.chat.thread_id == channel_post.message.platform_message_id
    assert direct.message.chat.thread_id is None


def test_the_bots_own_posts_and_system_messages_are_skipped() -> None:
    assert parse_event(event("mine", user_id=BOT), BOT, "relaybot") is None
    assert parse_event(event("ann joined", type="system_join_channel"), BOT, "relaybot") is None
    assert parse_event({"event": "typing", "data": {}}, BOT, "relaybot") is None
    assert parse_event({"event": "posted", "data": {"post": "{not json"}}, BOT, "relaybot") is None


def test_an_edit_names_the_post_it_replaces() -> None:
    original = event("first", "D")
    the_post = {**json.loads(original["data"]["post"]), "message": "second", "edit_at": 99}
    edited = {**original, "event": "post_edited", "data": {**original["data"], "post": json.dumps(the_post)}}
    incoming = parse_event(edited, BOT, "relaybot")
    assert incoming is not None
    assert incoming.message.edit_of == the_post["id"] and incoming.message.platform_message_id == f"{the_post['id']}@99"


def test_files_come_from_the_posts_metadata() -> None:
    info = {"id": "fileid", "name": "notes.txt", "size": 5, "mime_type": "text/plain"}
    incoming = parse_event(event("", "D", metadata={"files": [info]}), BOT, "relaybot")
    assert incoming is not None
    (media,) = incoming.media
    assert (media.source, media.name, media.kind) == ("fileid", "notes.txt", "file")


def test_a_press_carries_the_prompt_and_choice_from_the_context() -> None:
    body = {
        "user_id": "u",
        "user_name": "ann",
        "channel_id": "c",
        "post_id": "p",
        "trigger_id": "t",
        "team_id": "team",
        "context": {"prompt": "K7Q", "choice": "always", "label": "Allow always", "root": ""},
    }
    message = parse_press(body, is_direct=False)
    assert message is not None and message.press is not None
    assert (message.press.prompt_id, message.press.choice_id, message.press.prompt_message_id) == ("K7Q", "always", "p")
    assert message.text == "Allow always" and message.server_id == "team"


def test_a_slash_command_reads_as_the_command_and_a_renamed_one_as_its_own_name() -> None:
    form = command_request("relaybot-status", "now", "tok", "c", "u", "ann", "team")
    message = parse_slash_command({**form, "channel_name": "bot__u"})
    assert message is not None and message.text == "/status now" and message.is_direct
    plain = parse_slash_command(command_request("new", "", "tok", "c", "u", "ann", "team"))
    assert plain is not None and plain.text == "/new" and not plain.is_direct
