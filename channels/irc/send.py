"""Delivery: an outbound message as IRC lines, written window by window, each window retried on its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path

from bot.bus import OutboundMessage
from bot.errors import ChannelUnavailable
from bot.retry import RetryPolicy
from channels.delivery import SEND_ONCE, chunk_progress
from channels.irc.client import windows
from channels.irc.lines import irc_lines
from channels.numbered import NumberedChoices

Post = Callable[[Sequence[str]], Awaitable[None]]
"""post(lines): write one window of lines to the message's target and wait until the server handled them."""


def file_notice(path: str, name: str | None) -> str:
    """What stands in for a file: IRC carries no files (DCC is a direct connection the bot does not offer)."""
    return f"(a file, {name or Path(path).name}, was meant for you here, but IRC cannot carry files)"


def outbound_lines(message: OutboundMessage, choices: NumberedChoices, budget: int) -> list[str]:
    """The message's text, its choices as numbered lines and a notice per file, as lines within `budget` bytes."""
    text = choices.shown(message)
    notices = [file_notice(file.path, file.name) for file in message.files]
    return irc_lines("\n\n".join(part for part in (text, *notices) if part.strip()), budget)


async def send_lines(message: OutboundMessage, lines: Sequence[str], post: Post, retry: RetryPolicy) -> None:
    """Post `lines` window by window; a transient failure retries its window only; a resumed send skips the windows
    the journal already confirmed."""
    what = f"[{message.chat.session_key}] send {message.id}"
    progress = chunk_progress.get()
    if progress:
        retry = SEND_ONCE  # the outbox retries, without holding a send slot while it waits
    for index, window in enumerate(windows(lines)):
        if progress and index < progress.confirmed:
            continue
        await retry.run(partial(post, window), what, (ChannelUnavailable,))
        if progress:
            await progress.confirm(index)
