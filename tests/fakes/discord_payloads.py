"""Discord's JSON objects as its API and gateway send them: users, members, messages, guilds, channels."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

IS_VOICE_MESSAGE = 1 << 13  # message flag


def user(user_id: int, name: str, bot: bool = False) -> dict:
    """A user object; `bot` is only present for bots, as on Discord."""
    fields = {"id": str(user_id), "username": name, "discriminator": "0", "global_name": name.title(), "avatar": None}
    return {**fields, "bot": True} if bot else fields


def member_fields() -> dict:
    """The member part of a guild member (discord.py needs `flags`)."""
    return {"roles": [], "joined_at": now(), "deaf": False, "mute": False, "flags": 0, "nick": None}


def message(message_id: int, channel_id: int, guild_id: int | None, author: dict, content: str) -> dict:
    """A plain message (type 0); in a guild it carries `guild_id` and the author's `member`."""
    fields: dict[str, Any] = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": content,
        "timestamp": now(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "components": [],
        "pinned": False,
        "type": 0,
        "flags": 0,
    }
    if guild_id is not None:
        fields.update(guild_id=str(guild_id), member=member_fields())
    return fields


def as_reply(reply: dict, replied: dict, resolved: bool = True) -> dict:
    """`reply` made a reply (type 19) to `replied`, nested one level deep unless the gateway left it unresolved."""
    reference = {"type": 0, "message_id": replied["id"], "channel_id": replied["channel_id"]}
    if "guild_id" in replied:
        reference["guild_id"] = replied["guild_id"]
    reply = {**reply, "type": 19, "message_reference": reference}
    if resolved:
        reply["referenced_message"] = {k: v for k, v in replied.items() if k != "referenced_message"}
    return reply


def interaction(
    interaction_id: int, application_id: str, kind: int, token: str, channel: dict, guild_id: int | None, user: dict
) -> dict:
    """An INTERACTION_CREATE payload (without `data`): a member in a guild, a user in a DM."""
    fields: dict[str, Any] = {
        "id": str(interaction_id),
        "application_id": application_id,
        "type": kind,
        "token": token,
        "version": 1,
        "channel_id": channel["id"],
        "channel": channel,
        "locale": "en-US",
        "app_permissions": "2248473465835073",
        "attachment_size_limit": 10 * 1024 * 1024,
        "entitlements": [],
        "authorizing_integration_owners": {"0": str(guild_id or 0)},
        "context": 0 if guild_id is not None else 1,
    }
    if guild_id is not None:
        fields.update(guild_id=str(guild_id), guild_locale="en-US")
        fields["member"] = {"user": user, **member_fields(), "permissions": "2248473465835073"}
    else:
        fields["user"] = user
    return fields


def dm_channel(channel_id: int, recipient: dict) -> dict:
    """A DM channel (type 1) as an interaction carries it."""
    return {"id": str(channel_id), "type": 1, "recipients": [recipient], "last_message_id": None}


def attachment(attachment_id: int, filename: str, size: int, url: str, content_type: str | None, voice: bool) -> dict:
    """An attachment; a voice message's carries `duration_secs` and `waveform`."""
    fields: dict[str, Any] = {"id": str(attachment_id), "filename": filename, "size": size}
    fields.update(url=url, proxy_url=url)
    if content_type:
        fields["content_type"] = content_type
    if voice:
        fields.update(duration_secs=2.5, waveform="AAAA")
    return fields


def text_channel(channel_id: int, guild_id: int, name: str) -> dict:
    """A guild text channel (type 0)."""
    return {
        "id": str(channel_id),
        "type": 0,
        "guild_id": str(guild_id),
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "parent_id": None,
        "nsfw": False,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
    }


def thread(thread_id: int, guild_id: int, parent_id: int) -> dict:
    """A public thread (type 11) under a text channel."""
    metadata = {"archived": False, "auto_archive_duration": 1440, "archive_timestamp": now(), "locked": False}
    return {
        "id": str(thread_id),
        "type": 11,
        "guild_id": str(guild_id),
        "parent_id": str(parent_id),
        "owner_id": "42",
        "name": f"thread-{thread_id}",
        "last_message_id": None,
        "message_count": 0,
        "member_count": 1,
        "rate_limit_per_user": 0,
        "flags": 0,
        "thread_metadata": metadata,
    }


def guild(guild_id: int, users: Iterable[dict], channels: Iterable[dict]) -> dict:
    """GUILD_CREATE's guild: members, the @everyone role, channels and active threads."""
    everyone = {
        "id": str(guild_id),
        "name": "@everyone",
        "permissions": "104324673",
        "position": 0,
        "color": 0,
        "hoist": False,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }
    channels = list(channels)
    members = [{"user": u, **member_fields()} for u in users]
    return {
        "id": str(guild_id),
        "name": "Test guild",
        "icon": None,
        "owner_id": "42",
        "unavailable": False,
        "joined_at": now(),
        "large": False,
        "member_count": len(members),
        "members": members,
        "roles": [everyone],
        "channels": [c for c in channels if c["type"] == 0],
        "threads": [c for c in channels if c["type"] == 11],
        "emojis": [],
        "stickers": [],
        "features": [],
        "presences": [],
        "voice_states": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "premium_tier": 0,
        "nsfw_level": 0,
        "afk_timeout": 300,
        "preferred_locale": "en-US",
        "system_channel_id": None,
    }


def ready(bot: dict, guild_ids: Iterable[int], session_id: str, resume_gateway_url: str) -> dict:
    """READY: the bot user, its guilds (unavailable until their GUILD_CREATE) and where to resume."""
    return {
        "v": 10,
        "user": bot,
        "guilds": [{"id": str(g), "unavailable": True} for g in guild_ids],
        "session_id": session_id,
        "resume_gateway_url": resume_gateway_url,
        "session_type": "normal",
        "application": {"id": bot["id"], "flags": 0},
        "private_channels": [],
        "relationships": [],
    }


def application(bot: dict, owner: dict) -> dict:
    """GET /oauth2/applications/@me, with the fields discord.py reads at login."""
    return {
        "id": bot["id"],
        "name": bot["username"],
        "description": "",
        "icon": None,
        "bot_public": True,
        "bot_require_code_grant": False,
        "owner": owner,
        "verify_key": "0" * 64,
        "flags": 0,
        "bot": bot,
        "team": None,
    }


def now() -> str:
    """A Discord timestamp (ISO 8601) for this moment."""
    return datetime.now(UTC).isoformat()
