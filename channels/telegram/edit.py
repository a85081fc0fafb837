"""Replacing the text and buttons of one of the bot's Telegram messages in place."""

from __future__ import annotations

import logging
from typing import Any

from bot.errors import ChannelError, ChannelUnavailable, MarkupRejected, NothingToChange
from channels.formatting import markdown_to_telegram_html
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)


async def edit_message(bot: Any, call: PlatformCall, chat_id: int, message_id: int, text: str, keyboard: Any) -> bool:
    """Show `text` (Markdown) and `keyboard` (None removes the buttons) in the message; False when it cannot be edited.

    An edit that changes nothing counts as done; transient failures raise ChannelUnavailable for the caller to retry.
    """

    async def edit(body: str, parse_mode: str | None) -> None:
        await call(
            lambda: bot.edit_message_text(
                chat_id=chat_id, message_id=message_id, text=body, parse_mode=parse_mode, reply_markup=keyboard
            )
        )

    try:
        try:
            await edit(markdown_to_telegram_html(text), "HTML")
        except MarkupRejected as exc:
            logger.info("telegram: edit of %s: markup rejected (%s); using plain text", message_id, exc)
            await edit(text, None)
    except ChannelUnavailable:
        raise
    except NothingToChange:
        return True
    except ChannelError as exc:
        logger.info("telegram: message %s in %s cannot be edited (%s)", message_id, chat_id, exc)
        return False
    return True
