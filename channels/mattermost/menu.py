"""relaybot's commands as Mattermost custom slash commands: their triggers (renamed where Mattermost has a built-in
of that name), registered in each of the bot's teams."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.commands.catalogue import CommandSpec
from bot.errors import ChannelError
from channels.mattermost.calls import MattermostApi

logger = logging.getLogger(__name__)

RESERVED = frozenset(
    {
        "away", "code", "collapse", "dnd", "echo", "expand", "groupmsg", "header", "help", "invite",
        "invite_people", "join", "kick", "leave", "logout", "me", "msg", "mute", "offline", "online", "open",
        "purpose", "remove", "rename", "search", "settings", "shortcuts", "shrug", "status",
    }
)  # fmt: skip
"""Mattermost's built-in commands: a custom command may not take their trigger."""

RENAMED_PREFIX = "relaybot-"


def trigger_of(name: str) -> str:
    """The trigger a relaybot command gets: itself, or `relaybot-<name>` where Mattermost has a built-in."""
    return f"{RENAMED_PREFIX}{name}" if name in RESERVED else name


def command_name(command: str) -> str:
    """The relaybot command a slash command (`/relaybot-status`, `/new`) stands for."""
    name = command.lstrip("/").lower()
    renamed = name.removeprefix(RENAMED_PREFIX)
    return renamed if renamed != name and renamed in RESERVED else name


COMMANDS_PATH = "/mattermost/command"
DESCRIPTION_LIMIT = 128


class SlashCommands:
    """Registers the commands (replacing those this gateway registered before) and knows their tokens."""

    def __init__(self, api: MattermostApi, callback: str | None) -> None:
        self._api = api
        self._callback = callback
        self._tokens: set[str] = set()

    def knows(self, token: str) -> bool:
        """Whether `token` is one Mattermost gave a command this gateway registered."""
        return bool(token) and token in self._tokens

    async def register(self, commands: Sequence[CommandSpec]) -> None:
        """One custom command per relaybot command in every team; without a callback URL there are none."""
        if self._callback is None:
            logger.info("mattermost: no channels.mattermost.callback_url, so no slash commands")
            return
        for team in await self._api.teams():
            team_id = str(team["id"])
            for old in await self._api.commands(team_id):
                if old.get("url") == self._callback:
                    await self._api.delete_command(str(old["id"]))
            for command in commands:
                try:
                    created = await self._api.add_command(self._body(team_id, command))
                except ChannelError as exc:
                    logger.warning("mattermost: /%s not registered in team %s: %s", command.name, team_id, exc)
                    continue
                self._tokens.add(str(created["token"]))

    def _body(self, team_id: str, command: CommandSpec) -> dict[str, object]:
        description = command.description[:DESCRIPTION_LIMIT]
        return {
            "team_id": team_id,
            "trigger": trigger_of(command.name),
            "method": "P",
            "url": self._callback,
            "auto_complete": True,
            "auto_complete_desc": description,
            "display_name": f"relaybot {command.name}",
            "description": description,
            "username": "relaybot",
        }
