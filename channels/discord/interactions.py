"""Discord interactions as plain data: slash commands and button presses, parsed into InboundMessages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.bus import InboundMessage, Press
from channels.discord.parse import chat_of

APPLICATION_COMMAND, MESSAGE_COMPONENT = 2, 3  # interaction types
BUTTON = 2  # component type
_SEPARATOR = ":"


@dataclass(frozen=True, slots=True)
class DiscordInteraction:
    """What the adapter reads from a discord.Interaction: who, where, and which command or button.

    For a command, `name` and `args` (its options' values joined); for a button, its `custom_id`, the `label`
    shown on it and the id of the message that carries it (`message_id`).
    """

    id: int
    type: int
    channel_id: int
    guild_id: int | None
    thread_parent_id: int | None
    user_id: int
    user_name: str
    user_is_bot: bool
    name: str = ""
    args: str = ""
    custom_id: str = ""
    label: str = ""
    message_id: int | None = None

    @classmethod
    def from_discord(cls, interaction: Any) -> DiscordInteraction:
        """Read a discord.Interaction (threads are known from the channel discord.py built for it)."""
        from discord import Thread

        data: dict[str, Any] = interaction.data or {}
        channel = interaction.channel
        message = interaction.message
        custom_id = str(data.get("custom_id", ""))
        return cls(
            id=interaction.id,
            type=interaction.type.value,
            channel_id=interaction.channel_id or 0,
            guild_id=interaction.guild_id,
            thread_parent_id=channel.parent_id if isinstance(channel, Thread) else None,
            user_id=interaction.user.id,
            user_name=interaction.user.display_name,
            user_is_bot=interaction.user.bot,
            name=str(data.get("name", "")),
            args=" ".join(str(option.get("value", "")) for option in data.get("options", ())).strip(),
            custom_id=custom_id,
            label=button_label(message.components, custom_id) if message is not None else "",
            message_id=message.id if message is not None else None,
        )


def button_label(rows: Any, custom_id: str) -> str:
    """The label of the button `custom_id` among a message's action rows; "" when it is not there."""
    for row in rows:
        for item in getattr(row, "children", ()):
            if getattr(item, "custom_id", None) == custom_id:
                return str(getattr(item, "label", "") or "")
    return ""


def choice_custom_id(prompt_id: str, choice_id: str) -> str:
    """A button's custom_id: the prompt and the choice, as a press brings them back (at most 100 characters)."""
    return f"{prompt_id}{_SEPARATOR}{choice_id}"[:100]


def parse_interaction(interaction: DiscordInteraction, bot_id: int) -> InboundMessage | None:
    """A slash command as the text "/name args", a press of one of our buttons as a `Press`; None for the rest."""
    if interaction.user_is_bot or interaction.user_id == bot_id:
        return None
    if interaction.type == APPLICATION_COMMAND and interaction.name:
        text = f"/{interaction.name} {interaction.args}".strip()
        press = None
    elif interaction.type == MESSAGE_COMPONENT and _SEPARATOR in interaction.custom_id:
        prompt_id, choice_id = interaction.custom_id.split(_SEPARATOR, 1)
        message_id = str(interaction.message_id) if interaction.message_id is not None else None
        press = Press(prompt_id, choice_id, message_id)
        text = interaction.label or choice_id
    else:
        return None
    return InboundMessage(
        chat=chat_of(interaction.channel_id, interaction.thread_parent_id),
        sender_id=str(interaction.user_id),
        sender_name=interaction.user_name,
        text=text,
        is_direct=interaction.guild_id is None,
        mentioned=True,  # a command or a press is addressed to the bot
        platform_message_id=str(interaction.id),
        server_id=str(interaction.guild_id) if interaction.guild_id is not None else None,
        press=press,
    )
