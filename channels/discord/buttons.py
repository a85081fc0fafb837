"""Choices as Discord buttons: five to a row, at most 25, each button's custom_id naming its prompt and choice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.bus import Choice
from channels.discord.interactions import choice_custom_id

BUTTONS_PER_ROW, MAX_BUTTONS = 5, 25
LABEL_LIMIT = 80
_STYLES = {"default": 2, "primary": 1, "danger": 4}  # secondary, primary, danger


def choice_view(prompt_id: str, choices: Sequence[Choice]) -> Any:
    """A discord.ui.View of one button per choice, five to a row; presses arrive as interactions, not callbacks."""
    from discord import ButtonStyle
    from discord.ui import Button, View

    view = View(timeout=None)
    for index, choice in enumerate(choices[:MAX_BUTTONS]):
        view.add_item(
            Button(
                label=choice.label[:LABEL_LIMIT],
                custom_id=choice_custom_id(prompt_id, choice.id),
                style=ButtonStyle(_STYLES[choice.style]),
                row=index // BUTTONS_PER_ROW,
            )
        )
    # A stopped view still renders; discord.py then keeps no callback registry for it (the adapter handles presses).
    view.stop()
    return view
