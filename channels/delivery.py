"""Sending one outbound message as platform-sized chunks, each retried on its own."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial

from bot.bus import OutboundMessage
from bot.errors import ChannelUnavailable, MarkupRejected
from bot.retry import RetryPolicy
from channels.formatting import split_for_platform

logger = logging.getLogger(__name__)

Post = Callable[[str, bool, bool], Awaitable[None]]
"""post(text, as_markup, is_first_chunk): one platform call that sends one chunk."""


@dataclass(frozen=True)
class ChunkProgress:
    """The journal's view of one message being sent: chunks already confirmed, and how to confirm one more."""

    confirmed: int
    confirm: Callable[[int], Awaitable[None]]


SEND_ONCE = RetryPolicy(attempts=1)

chunk_progress: ContextVar[ChunkProgress | None] = ContextVar("chunk_progress", default=None)
"""Set by the delivery worker around `Channel.send`, so a resumed send skips the chunks already delivered."""


async def send_in_chunks(
    message: OutboundMessage,
    limit: int,
    render: Callable[[str], str],
    post: Post,
    retry: RetryPolicy,
    ends_send: bool = False,
) -> None:
    """Split, render and post each chunk; transient failures retry that chunk only, rejected markup goes plain.

    `ends_send` says the caller posts nothing after the last chunk: its confirmation is then left to the outbox's
    `sent`, written as the send returns (one journal write fewer, with no await between them)."""
    what = f"[{message.chat.session_key}] send {message.id}"
    progress = chunk_progress.get()
    if progress:
        retry = SEND_ONCE  # the outbox retries, without holding a send slot while it waits
    chunks = split_for_platform(message.text, limit)
    last = len(chunks) - 1 if ends_send else None
    for index, chunk in enumerate(chunks):
        if progress and index < progress.confirmed:
            continue
        first = index == 0
        rendered = render(chunk)
        try:
            await retry.run(partial(post, rendered, True, first), what, (ChannelUnavailable,))
        except MarkupRejected as exc:
            logger.info("%s: markup rejected (%s); resending as plain text", what, exc)
            await retry.run(partial(post, chunk, False, first), what, (ChannelUnavailable,))
        if progress and index != last:
            await progress.confirm(index)
