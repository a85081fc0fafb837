"""The Slack app manifest relaybot needs: scopes, events, slash commands, interactivity and Socket Mode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.commands.catalogue import CommandSpec
from channels.slack.menu import slash_name

BOT_SCOPES = (
    "app_mentions:read",  # app_mention events
    "channels:history",  # message.channels, conversations.history/replies in public channels
    "groups:history",  # the same in private channels
    "im:history",  # message.im, DM catch-up
    "im:read",
    "chat:write",  # replies, chat.update, chat.postEphemeral, assistant.threads.setStatus
    "commands",  # slash commands
    "files:read",  # shared files
    "files:write",  # send_file uploads
    "reactions:write",  # 👀 / ✅ / ❌ on the messages it handles
    "users:read",  # senders' display names
)
BOT_EVENTS = ("app_mention", "message.channels", "message.groups", "message.im")


def slack_manifest(name: str, commands: Sequence[CommandSpec]) -> dict[str, Any]:
    """The manifest for an app called `name` offering `commands` (the catalogue's, then plugins'), to paste at
    api.slack.com/apps → Create New App → From an app manifest."""
    return {
        "display_information": {"name": name, "description": "A self-hosted AI assistant"},
        "features": {
            "app_home": {
                "home_tab_enabled": False,
                "messages_tab_enabled": True,  # lets people DM the bot
                "messages_tab_read_only_enabled": False,
            },
            "bot_user": {"display_name": name, "always_online": True},
            "slash_commands": [
                {
                    "command": f"/{slash_name(command.name)}",
                    "description": command.description[:100],
                    "should_escape": False,
                }
                for command in commands
            ],
        },
        "oauth_config": {"scopes": {"bot": list(BOT_SCOPES)}},
        "settings": {
            "event_subscriptions": {"bot_events": list(BOT_EVENTS)},
            "interactivity": {"is_enabled": True},
            "org_deploy_enabled": False,
            "socket_mode_enabled": True,
            "token_rotation_enabled": False,
        },
    }
