"""Mattermost's WebSocket events, button callbacks and slash commands as InboundMessages: pure functions."""

from __future__ import annotations

import json
import re
from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from bot.bus import ChatRef, InboundMessage, Press
from channels.mattermost.menu import command_name
from channels.media import MediaRef, kind_of

CHANNEL = "mattermost"
DIRECT = "D"  # channel_type of a one-to-one channel; "G" group DMs, "O" open and "P" private channels are groups


@dataclass(frozen=True, slots=True)
class Incoming:
    """A user's post as a message, with the files still to download and when it was posted (unix ms)."""

    message: InboundMessage
    media: tuple[MediaRef, ...]
    created_at: int = 0


def parse_event(
    event: dict[str, Any],
    bot_id: str,
    bot_username: str,
    bot_threads: Container[str] = (),
    reply_in_thread: bool = False,
) -> Incoming | None:
    """A `posted` or `post_edited` event of someone else's post as an Incoming; None for every other event.

    `bot_threads` holds `channel:root` of threads the bot answered in: a reply there counts as a mention. With
    `reply_in_thread` a top-level channel post is the root of its own thread session."""
    kind = event.get("event")
    data = event.get("data") or {}
    if kind not in ("posted", "post_edited") or not isinstance(data.get("post"), str):
        return None
    try:
        post = json.loads(data["post"])
    except ValueError:
        return None
    user, channel, post_id = post.get("user_id"), post.get("channel_id"), post.get("id")
    if not user or user == bot_id or not channel or not post_id or post.get("type"):
        return None  # the bot's own post, or a system message (joins, header changes)
    media = tuple(files_of(post))
    text = post.get("message") or ""
    if not text.strip() and not media:
        return None
    root = post.get("root_id") or None
    is_direct = data.get("channel_type") == DIRECT
    mentions = _ids(data.get("mentions"))
    by_name = _mention_of(bot_username)
    mentioned = (
        is_direct
        or bot_id in mentions
        or by_name.search(text) is not None
        or (root is not None and f"{channel}:{root}" in bot_threads)
    )
    edited = kind == "post_edited"
    message = InboundMessage(
        chat=ChatRef(CHANNEL, channel, root or (post_id if reply_in_thread and not is_direct else None)),
        sender_id=user,
        text=by_name.sub("", text).strip(),
        sender_name=(data.get("sender_name") or "").lstrip("@") or None,
        is_direct=is_direct,
        mentioned=mentioned,
        platform_message_id=f"{post_id}@{post.get('edit_at')}" if edited else post_id,
        server_id=None if is_direct else data.get("team_id") or None,
        edit_of=post_id if edited else None,
    )
    return Incoming(message, () if edited else media, int(post.get("create_at") or 0))


def files_of(post: dict[str, Any]) -> list[MediaRef]:
    """The files a post carries (`metadata.files`), to download by id."""
    found = []
    for info in (post.get("metadata") or {}).get("files") or []:
        mime = info.get("mime_type") or "application/octet-stream"
        found.append(MediaRef(info["id"], info["id"], kind_of(mime), mime, info.get("size"), info.get("name")))
    return found


def parse_press(body: dict[str, Any], is_direct: bool) -> InboundMessage | None:
    """A button callback (`PostActionIntegrationRequest`) for one of relaybot's buttons; None when it is not one.

    The caller checks the context's signature first (`buttons.verified`)."""
    context = body.get("context") or {}
    user, channel, post_id = body.get("user_id"), body.get("channel_id"), body.get("post_id")
    prompt, choice = context.get("prompt"), context.get("choice")
    if not user or not channel or not post_id or not prompt or not choice:
        return None
    return InboundMessage(
        chat=ChatRef(CHANNEL, channel, context.get("root") or None),
        sender_id=user,
        text=str(context.get("label") or choice),
        sender_name=body.get("user_name") or None,
        is_direct=is_direct,
        mentioned=True,
        platform_message_id=f"{post_id}#press:{body.get('trigger_id') or choice}",
        server_id=None if is_direct else body.get("team_id") or None,
        press=Press(str(prompt), str(choice), post_id),
    )


def parse_slash_command(form: dict[str, str]) -> InboundMessage | None:
    """A custom slash command's request as the text `/name args` relaybot's commands read; None when incomplete."""
    user, channel, command = form.get("user_id"), form.get("channel_id"), form.get("command")
    if not user or not channel or not command:
        return None
    text = f"/{command_name(command)} {form.get('text') or ''}".strip()
    is_direct = "__" in (form.get("channel_name") or "")  # a DM channel is named `<user id>__<user id>`
    return InboundMessage(
        chat=ChatRef(CHANNEL, channel, form.get("root_id") or None),
        sender_id=user,
        text=text,
        sender_name=form.get("user_name") or None,
        is_direct=is_direct,
        mentioned=True,
        platform_message_id=f"{channel}:command:{form.get('trigger_id') or text}",
        server_id=None if is_direct else form.get("team_id") or None,
    )


def _ids(value: Any) -> list[str]:
    """`mentions`, a JSON-encoded list of user ids inside the event's data."""
    try:
        ids = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return []
    return [str(i) for i in ids] if isinstance(ids, list) else []


def _mention_of(username: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w@])@{re.escape(username)}\b", re.IGNORECASE)


def missed_events(answer: dict[str, Any], since: int, channel_type: str) -> list[dict[str, Any]]:
    """The posts of a `{"order", "posts"}` answer created after `since` (unix ms), oldest first, as `posted` events."""
    posts = [post for post in (answer.get("posts") or {}).values() if int(post.get("create_at") or 0) > since]
    posts.sort(key=lambda post: int(post.get("create_at") or 0))
    return [
        {
            "event": "posted",
            "data": {"post": json.dumps(post), "channel_type": channel_type},
            "broadcast": {"channel_id": post.get("channel_id")},
        }
        for post in posts
    ]
