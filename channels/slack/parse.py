"""Slack payloads to bus messages, pure: message and mention events, edits, button presses, slash commands."""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import replace
from typing import Any

from bot.bus import ChatRef, InboundMessage, Press
from channels.media import MediaRef, kind_of
from channels.slack.menu import command_name

USER_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
BLOCK_PREFIX = "relaybot:"
"""Starts the block_id of every actions block relaybot renders; the rest is the prompt id."""


def parse_event(
    event: dict[str, Any], bot_user_id: str, reply_in_thread: bool, bot_threads: Container[str] = ()
) -> InboundMessage | None:
    """Turn a `message` or `app_mention` event (or a user's edit of one) into an InboundMessage; None otherwise.

    `bot_threads` holds `channel:thread_ts` of threads the bot answered in: a reply there counts as a mention.
    """
    if event.get("type") == "message" and event.get("subtype") == "message_changed":
        return _parse_edit(event, bot_user_id, reply_in_thread, bot_threads)
    if event.get("type") not in ("message", "app_mention") or event.get("subtype") not in USER_SUBTYPES:
        return None
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if event.get("bot_id") or not user or user == bot_user_id or not channel or not ts:
        return None
    text = event.get("text") or ""
    if not text.strip() and not files_of(event):
        return None
    is_direct = event.get("channel_type", "im" if channel.startswith("D") else "channel") == "im"
    thread_ts = event.get("thread_ts")
    mention = _mention_of(bot_user_id)
    mentioned = (
        event["type"] == "app_mention"
        or mention.search(text) is not None
        or (thread_ts is not None and f"{channel}:{thread_ts}" in bot_threads)
    )
    session_thread = thread_ts or (ts if reply_in_thread and not is_direct else None)
    return InboundMessage(
        chat=ChatRef("slack", channel, session_thread),
        sender_id=user,
        text=without_mention(text, bot_user_id),
        is_direct=is_direct,
        mentioned=mentioned,
        platform_message_id=f"{channel}:{ts}",
        server_id=event.get("team") or None,
    )


def _parse_edit(
    event: dict[str, Any], bot_user_id: str, reply_in_thread: bool, bot_threads: Container[str]
) -> InboundMessage | None:
    """A user's edit (`message_changed` with `edited`); unfurls and reply counts change a message without it."""
    changed, previous = event.get("message") or {}, event.get("previous_message") or {}
    edited = changed.get("edited") or {}
    if not edited or changed.get("text") == previous.get("text"):
        return None
    inner = {**changed, "channel": event.get("channel"), "subtype": None, "files": None}
    if "channel_type" in event:
        inner["channel_type"] = event["channel_type"]
    message = parse_event(inner, bot_user_id, reply_in_thread, bot_threads)
    if message is None or message.platform_message_id is None:
        return None
    original = message.platform_message_id
    return replace(message, edit_of=original, platform_message_id=f"{original}@{edited.get('ts', event.get('ts'))}")


def parse_press(body: dict[str, Any]) -> InboundMessage | None:
    """A `block_actions` payload for a button relaybot rendered: the press, its label as the text; None otherwise."""
    actions = body.get("actions") or []
    user = (body.get("user") or {}).get("id")
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = container.get("channel_id") or (body.get("channel") or {}).get("id")
    message_ts = container.get("message_ts") or message.get("ts")
    if not actions or not user or not channel or not message_ts:
        return None
    action = actions[0]
    block_id = action.get("block_id") or ""
    if action.get("type") != "button" or not block_id.startswith(BLOCK_PREFIX):
        return None
    thread_ts = container.get("thread_ts") or message.get("thread_ts")
    label = (action.get("text") or {}).get("text") or action.get("action_id", "")
    prompt_message = f"{channel}:{message_ts}"
    return InboundMessage(
        chat=ChatRef("slack", channel, thread_ts if thread_ts and thread_ts != message_ts else None),
        sender_id=user,
        text=label,
        sender_name=(body.get("user") or {}).get("name") or None,
        is_direct=channel.startswith("D"),
        mentioned=True,
        platform_message_id=f"{prompt_message}#press:{action.get('action_ts') or body.get('trigger_id')}",
        server_id=(body.get("team") or {}).get("id") or None,
        press=Press(block_id.removeprefix(BLOCK_PREFIX), action.get("action_id", ""), prompt_message),
    )


def parse_slash_command(body: dict[str, Any]) -> InboundMessage | None:
    """A slash command payload as the text `/name args` relaybot's commands read; None when incomplete."""
    user, channel, command = body.get("user_id"), body.get("channel_id"), body.get("command")
    if not user or not channel or not command:
        return None
    text = f"/{command_name(command)} {body.get('text') or ''}".strip()
    return InboundMessage(
        chat=ChatRef("slack", channel),
        sender_id=user,
        text=text,
        sender_name=body.get("user_name") or None,
        is_direct=body.get("channel_name") == "directmessage" or channel.startswith("D"),
        mentioned=True,
        platform_message_id=f"{channel}:command:{body.get('trigger_id') or text}",
        server_id=body.get("team_id") or None,
    )


def files_of(event: dict[str, Any]) -> list[MediaRef]:
    """The downloadable files a message carries (Slack leaves out the URL of files the bot may not see)."""
    found = []
    for file in event.get("files") or []:
        url = file.get("url_private_download") or file.get("url_private")
        if url:
            mime = file.get("mimetype") or "application/octet-stream"
            found.append(MediaRef(url, file["id"], kind_of(mime), mime, file.get("size"), file.get("name")))
    return found


def unescape(text: str) -> str:
    """Slack escapes exactly these three characters in message text."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _mention_of(bot_user_id: str) -> re.Pattern[str]:
    return re.compile(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>")


def without_mention(text: str, bot_user_id: str) -> str:
    """`text` unescaped, the bot's mentions taken out."""
    return unescape(_mention_of(bot_user_id).sub("", text)).strip()
