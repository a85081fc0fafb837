"""A live reply as posted-then-edited messages; past the platform limit it continues in a new message."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Protocol

from bot.errors import MarkupRejected
from channels.formatting import split_for_platform

logger = logging.getLogger(__name__)

_FENCE_LINE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)


class EditsMessages(Protocol):
    """A channel's calls for posting, editing and deleting its own messages in one chat."""

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        """Post a message; return its platform id."""

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        """Replace a message's text; an edit that changes nothing is not an error."""

    async def delete(self, message_id: str) -> None:
        """Delete one of the bot's messages."""


def balance_fences(text: str) -> str:
    """Close a code fence left open at the end, so an intermediate state renders as it will at the end."""
    fences = _FENCE_LINE.findall(text)
    if len(fences) % 2 == 0:
        return text
    return f"{text.rstrip()}\n{fences[-1]}"


class EditedMessages:
    """A LiveWriter over EditsMessages: pages of at most `limit` characters, each edited only when it changed.

    `plain` turns plain text into the markup that shows the same (HTML-escaping it): an edit from one to the
    other would change nothing the user sees, and a platform may refuse it as "not modified".
    """

    finishes_in_place = True

    def __init__(
        self,
        target: EditsMessages,
        limit: int,
        render: Callable[[str], str],
        reply_to: str | None = None,
        intermediate: Callable[[str], str] = lambda text: text,
        plain: Callable[[str], str] | None = None,
    ) -> None:
        self._target = target
        self._limit = limit
        self._render = render
        self._reply_to = reply_to
        self._intermediate = intermediate
        self._plain = plain
        self._ids: list[str] = []
        self._shown: list[tuple[str, bool]] = []

    @property
    def message_ids(self) -> list[str]:
        """The platform ids of the messages this live reply uses, in order."""
        return list(self._ids)

    async def show(self, text: str) -> None:
        """Intermediate pages go out without markup (a half-written reply may not parse)."""
        # Room for the fence an intermediate page may need closed.
        pages = [self._intermediate(page) for page in split_for_platform(text, self._limit - 8)]
        await self._apply(pages, markup=False)

    async def finish(self, text: str) -> bool:
        pages = split_for_platform(text, self._limit)
        try:
            await self._apply([self._render(page) for page in pages], markup=True)
        except MarkupRejected as exc:
            logger.info("final live reply markup rejected (%s); using plain text", exc)
            await self._apply(pages, markup=False)
        for message_id in self._ids[len(pages) :]:
            await self._target.delete(message_id)
        del self._ids[len(pages) :], self._shown[len(pages) :]
        return True

    async def discard(self) -> None:
        while self._ids:
            await self._target.delete(self._ids.pop())
            self._shown.pop()

    def _looks(self, page: str, markup: bool) -> tuple[str, bool]:
        """What a page shows: with `plain` (plain text as equivalent markup) plain and markup pages compare alike."""
        if self._plain is None:
            return page, markup
        return (page if markup else self._plain(page)), True

    async def _apply(self, pages: list[str], markup: bool) -> None:
        for index, page in enumerate(pages):
            if index < len(self._ids):
                if self._looks(*self._shown[index]) != self._looks(page, markup):
                    await self._target.edit_text(self._ids[index], page, markup)
                    self._shown[index] = (page, markup)
            else:
                reply_to = self._reply_to if index == 0 else None
                self._ids.append(await self._target.post_text(page, markup, reply_to))
                self._shown.append((page, markup))
