"""Slack's payloads as Socket Mode carries them: message_changed events, block_actions, slash command fields."""

from __future__ import annotations

from typing import Any


def message_changed(event: dict, text: str, edited_ts: str) -> dict:
    """The message_changed event Slack sends when the author of `event` edits it to `text`."""
    changed = {k: v for k, v in event.items() if k not in ("channel", "channel_type", "event_ts")}
    previous = dict(changed)
    changed.update(text=text, edited={"user": event["user"], "ts": edited_ts})
    return {
        "type": "message",
        "subtype": "message_changed",
        "hidden": True,
        "channel": event["channel"],
        "channel_type": event.get("channel_type", "channel"),
        "ts": edited_ts,
        "event_ts": edited_ts,
        "message": changed,
        "previous_message": previous,
    }


def block_actions(
    message: dict, channel: str, label: str, user: dict[str, str], team_id: str, action_ts: str, trigger_id: str
) -> dict[str, Any]:
    """The block_actions payload of pressing the button labelled `label` under the bot's `message`."""
    block, button = next(
        (b, e)
        for b in message.get("blocks") or []
        if b["type"] == "actions"
        for e in b["elements"]
        if e["text"]["text"] == label
    )
    container = {"type": "message", "message_ts": message["ts"], "channel_id": channel, "is_ephemeral": False}
    if message.get("thread_ts"):
        container["thread_ts"] = message["thread_ts"]
    return {
        "type": "block_actions",
        "user": {**user, "team_id": team_id},
        "api_app_id": "A0001",
        "token": "verification-token",
        "container": container,
        "trigger_id": trigger_id,
        "team": {"id": team_id, "domain": "fake"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "directmessage" if channel.startswith("D") else "general"},
        "message": message,
        "state": {"values": {}},
        "response_url": f"https://hooks.slack.invalid/actions/{trigger_id}",
        "actions": [
            {
                "action_id": button["action_id"],
                "block_id": block["block_id"],
                "text": button["text"],
                "value": button.get("value"),
                "style": button.get("style"),
                "type": "button",
                "action_ts": action_ts,
            }
        ],
    }


def slash_command(command: str, text: str, user: str, channel: str, team_id: str, trigger_id: str) -> dict[str, str]:
    """The fields of a slash command; over Socket Mode they are the envelope's payload."""
    return {
        "token": "verification-token",
        "team_id": team_id,
        "team_domain": "fake",
        "channel_id": channel,
        "channel_name": "directmessage" if channel.startswith("D") else "general",
        "user_id": user,
        "user_name": "olive",
        "command": command,
        "text": text,
        "api_app_id": "A0001",
        "is_enterprise_install": "false",
        "response_url": f"https://hooks.slack.invalid/commands/{trigger_id}",
        "trigger_id": trigger_id,
    }
