"""Mattermost's objects, WebSocket frames and error answers as its server shapes them: posts, events, callbacks.

- A post: `{"id", "create_at", "update_at", "edit_at", "delete_at", "user_id", "channel_id", "root_id" ("" or the
  thread's first post), "message", "type": "", "props": {}, "file_ids": [...], "metadata": {"files": [FileInfo]}}`;
  ids are 26 lowercase letters and digits, times unix milliseconds.
- A `posted` event: `{"event": "posted", "data": {"channel_display_name", "channel_name", "channel_type" ("D"
  direct, "G" group DM, "O" open, "P" private), "post": <the post JSON-encoded as a string>, "sender_name"
  ("@username"), "set_online", "team_id" ("" in DMs), "mentions": <JSON-encoded list of mentioned user ids, only when
  there are any>}, "broadcast": {"omit_users", "user_id", "channel_id", "team_id"}, "seq": n}`. `post_edited`
  carries `post` alike; the server also sends a user's own posts back to them.
- An interactive-message button press (`PostActionIntegrationRequest`), POSTed as JSON by the server to the action's
  `integration.url`: `{"user_id", "user_name", "channel_id", "channel_name", "team_id", "team_domain", "post_id",
  "trigger_id", "type": "", "data_source": "", "context": <the action's integration.context>}`; the answer may hold
  `{"update": {"message", "props"}, "ephemeral_text"}`.
- A custom slash command, POSTed form-encoded to the command's `url`: `channel_id`, `channel_name`, `command`
  ("/trigger"), `response_url`, `team_domain`, `team_id`, `text`, `token` (the command's), `trigger_id`, `user_id`,
  `user_name`; the answer `{"response_type": "ephemeral"|"in_channel", "text"}` (empty: nothing shown).
"""

from __future__ import annotations

import json
import secrets
import string
import time
from typing import Any

from aiohttp import web

_ID_ALPHABET = string.ascii_lowercase + string.digits
_last_ms = 0


def new_id() -> str:
    """A Mattermost id: 26 characters of [a-z0-9]."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(26))


def post(
    user_id: str, channel_id: str, message: str, root_id: str = "", files: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A new post object; each is made at least a millisecond after the one before, as ids order them."""
    global _last_ms
    now = _last_ms = max(int(time.time() * 1000), _last_ms + 1)
    files = files or []
    return {
        "id": new_id(),
        "create_at": now,
        "update_at": now,
        "edit_at": 0,
        "delete_at": 0,
        "user_id": user_id,
        "channel_id": channel_id,
        "root_id": root_id,
        "original_id": "",
        "message": message,
        "type": "",
        "props": {},
        "hashtags": "",
        "pending_post_id": "",
        "file_ids": [file["id"] for file in files],
        "metadata": {"files": files} if files else {},
    }


def posted(
    event: str,
    the_post: dict[str, Any],
    channel_type: str,
    sender_name: str,
    team_id: str,
    mentions: list[str] | None = None,
) -> dict[str, Any]:
    """A `posted` (or `post_edited`) event, without its `seq` (the connection numbers it)."""
    data: dict[str, Any] = {
        "channel_display_name": "Town Square" if channel_type in "OP" else sender_name,
        "channel_name": "town-square" if channel_type in "OP" else the_post["channel_id"],
        "channel_type": channel_type,
        "post": json.dumps(the_post),
        "sender_name": sender_name,
        "set_online": True,
        "team_id": team_id if channel_type in "OP" else "",
    }
    if mentions:
        data["mentions"] = json.dumps(mentions)
    broadcast = {"omit_users": None, "user_id": "", "channel_id": the_post["channel_id"], "team_id": ""}
    return {"event": event, "data": data, "broadcast": broadcast}


def action_request(
    the_post: dict[str, Any], context: dict[str, Any], user_id: str, user_name: str, team_id: str
) -> dict[str, Any]:
    """What the server POSTs to an action's integration URL when a user presses its button."""
    return {
        "user_id": user_id,
        "user_name": user_name,
        "channel_id": the_post["channel_id"],
        "channel_name": "",
        "team_id": team_id,
        "team_domain": "",
        "post_id": the_post["id"],
        "trigger_id": new_id(),
        "type": "",
        "data_source": "",
        "context": context,
    }


def command_request(
    trigger: str,
    text: str,
    token: str,
    channel_id: str,
    user_id: str,
    user_name: str,
    team_id: str,
    channel_name: str = "town-square",
) -> dict[str, str]:
    """The form fields the server POSTs to a custom slash command's URL (a DM channel is named `<id>__<id>`)."""
    return {
        "channel_id": channel_id,
        "channel_name": channel_name,
        "command": f"/{trigger}",
        "response_url": "",
        "team_domain": "",
        "team_id": team_id,
        "text": text,
        "token": token,
        "trigger_id": new_id(),
        "user_id": user_id,
        "user_name": user_name,
    }


def mm_error(status: int, error_id: str, message: str) -> web.Response:
    """An error answer as Mattermost's API shapes it."""
    body = {"id": error_id, "message": message, "detailed_error": "", "request_id": new_id(), "status_code": status}
    return web.json_response(body, status=status)


def rate_limited(retry_after: int) -> web.Response:
    """The rate limiter's answer: plain text and the X-RateLimit / Retry-After headers."""
    headers = {
        "X-RateLimit-Limit": "10",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(retry_after),
        "Retry-After": str(retry_after),
    }
    return web.Response(status=429, text="limit exceeded\n", headers=headers)
