"""Block Kit for relaybot's messages: the text in a section and the choices as buttons."""

from __future__ import annotations

from typing import Any

from bot.bus import Choice
from channels.slack.parse import BLOCK_PREFIX

SECTION_LIMIT = 3000
"""Slack refuses a section whose text is longer; such a text goes as plain messages before the buttons."""
LABEL_LIMIT = 75


def choice_blocks(text: str | None, choices: tuple[Choice, ...], prompt_id: str | None) -> list[dict[str, Any]]:
    """A section with `text` (mrkdwn, when given) above an actions block with one button per choice."""
    blocks: list[dict[str, Any]] = []
    if text:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})
    buttons = []
    for choice in choices:
        button: dict[str, Any] = {
            "type": "button",
            "action_id": choice.id,
            "value": choice.id,
            "text": {"type": "plain_text", "text": choice.label[:LABEL_LIMIT], "emoji": True},
        }
        if choice.style != "default":
            button["style"] = choice.style
        buttons.append(button)
    blocks.append({"type": "actions", "block_id": f"{BLOCK_PREFIX}{prompt_id or ''}", "elements": buttons})
    return blocks
