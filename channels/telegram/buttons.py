"""Choices as a Telegram inline keyboard; each button's callback_data is `prompt_id:choice_id` (at most 64 bytes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.bus import Choice
from bot.errors import ChannelError

CALLBACK_DATA_LIMIT = 64
ROW_WIDTH = 3
SHORT_LABEL = 16
"""Labels up to this long share a row (up to ROW_WIDTH buttons); longer ones get a row each."""


def callback_data(prompt_id: str, choice_id: str) -> str:
    """The data a button carries back in its press; ChannelError when Telegram would refuse it."""
    data = f"{prompt_id}:{choice_id}"
    if len(data.encode()) > CALLBACK_DATA_LIMIT:
        raise ChannelError(f"button data {data!r} is over Telegram's {CALLBACK_DATA_LIMIT} bytes")
    return data


def button_rows(choices: Sequence[Choice]) -> list[list[tuple[str, str]]]:
    """Choices laid out as rows of (label, choice id): short labels side by side, long ones alone."""
    if all(len(choice.label) <= SHORT_LABEL for choice in choices):
        return [[(c.label, c.id) for c in choices[i : i + ROW_WIDTH]] for i in range(0, len(choices), ROW_WIDTH)]
    return [[(choice.label, choice.id)] for choice in choices]


def inline_keyboard(prompt_id: str | None, choices: Sequence[Choice]) -> Any:
    """python-telegram-bot's InlineKeyboardMarkup for the choices; None when there are none."""
    if not choices:
        return None
    if not prompt_id:
        raise ChannelError("an outbound message with choices needs a prompt_id")
    from telegram import InlineKeyboardButton, InlineKeyboardMarkup

    rows = button_rows(choices)
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(label, callback_data=callback_data(prompt_id, cid)) for label, cid in row]
            for row in rows
        ]
    )
