"""Live replies: a turn's reply shown while it is generated, as a draft or a throttled, never-repeated edit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from bot.bus import OutboundMessage
from bot.config.channels.base import ChannelSection
from bot.errors import ChannelError, ChannelUnavailable, RateLimited
from bot.retry import RetryPolicy

logger = logging.getLogger(__name__)

T = TypeVar("T")

INTERRUPTED = "(the reply was interrupted)"
STOPPED = "(stopped)"


@dataclass(frozen=True, slots=True)
class StreamSettings:
    """One channel's streaming switches, from its config section."""

    mode: Literal["auto", "edit", "off"] = "auto"
    interval: float = 1.0
    show_tool_progress: bool = True
    show_reasoning: bool = False

    @classmethod
    def of(cls, section: ChannelSection) -> StreamSettings:
        return cls(section.streaming, section.stream_interval, section.show_tool_progress, section.show_reasoning)


class PlatformCall(Protocol):
    """A channel's way to make one platform request, its SDK's failures translated into ours."""

    def __call__(self, make: Callable[[], Awaitable[T]], /) -> Awaitable[T]: ...


class LiveWriter(Protocol):
    """How one live reply reaches its chat: a draft bubble, edited messages or a native stream."""

    finishes_in_place: bool  # False for a preview (a draft): the normal send delivers the final text

    async def show(self, text: str) -> None:
        """Show an intermediate state (the text so far, or a status line)."""

    async def finish(self, text: str) -> bool:
        """Show the final text; False when the normal send must deliver it (a draft is only a preview)."""

    async def discard(self) -> None:
        """Remove whatever was shown: the turn ended without a reply."""


class LiveReply:
    """One turn's live message: coalesces deltas, shows at most one update per interval, finishes exactly once."""

    def __init__(
        self,
        writer: LiveWriter,
        settings: StreamSettings,
        retry: RetryPolicy,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._writer = writer
        self._settings = settings
        self._retry = retry
        self._clock = clock
        self._text = ""
        self._reasoning = ""
        self._status = ""
        self._new_call = False
        self._shown = ""
        self._last_shown = float("-inf")
        self._broken = False
        self._dirty = asyncio.Event()
        self._closing = asyncio.Event()
        self._pump = asyncio.create_task(self._run(), name="live-reply")

    @property
    def text(self) -> str:
        """The reply text streamed so far (of the latest model call that produced text)."""
        return self._text

    def call_started(self) -> None:
        """A new model call: its first text replaces what an earlier call streamed."""
        self._new_call = True

    def add(self, text: str) -> None:
        """Append streamed reply text."""
        if self._new_call:
            self._text, self._reasoning, self._new_call = "", "", False
            text = text.lstrip()
        self._text += text
        self._status = ""
        self._dirty.set()

    def add_reasoning(self, text: str) -> None:
        """Reasoning text; shown (until reply text arrives) only with show_reasoning."""
        if self._settings.show_reasoning:
            self._reasoning += text
            self._dirty.set()

    def tool_started(self, name: str) -> None:
        """While a tool runs the live message shows one status line, which later text replaces."""
        if self._settings.show_tool_progress:
            self._status = f"running {name}…"
            self._dirty.set()

    def view(self) -> str:
        """What the live message should show now."""
        if self._status:
            return self._status
        if not self._text and self._reasoning:
            return f"_{self._reasoning.strip()}_"
        return self._text

    async def finish(self, message: OutboundMessage) -> bool:
        """Complete the live message with the turn's reply; False when the reply must still be sent normally."""
        await self.close()
        if not self._writer.finishes_in_place:
            return False
        if self._broken:
            await self._discard()
            return False
        if message.kind == "error":
            if not self._shown:
                return False
            if self._text:
                await self._final(f"{self._text.rstrip()}\n\n{INTERRUPTED}")
            else:
                await self._discard()
            return False
        return await self._final(message.text)

    async def abandon(self, outcome: str) -> None:
        """The turn ended without a reply: keep streamed text honestly marked, drop a bare status line."""
        await self.close()
        if self._broken or not self._shown:
            return
        if outcome == "cancelled" and self._text:
            await self._final(f"{self._text.rstrip()}\n\n{STOPPED}")
        elif self._text and outcome != "silent":
            await self._final(self._text)
        else:
            await self._discard()

    async def close(self) -> None:
        """Stop updating; what is shown stays as it is."""
        self._closing.set()
        await asyncio.gather(self._pump, return_exceptions=True)

    async def _final(self, text: str) -> bool:
        try:
            return await self._retry.run(lambda: self._writer.finish(text), "live reply final", (ChannelUnavailable,))
        except ChannelError as exc:
            logger.warning("live reply could not be completed in place (%s); sending it anew", exc)
        except Exception:
            logger.exception("live reply final edit crashed; sending it anew")
        await self._discard()
        return False

    async def _backoff(self, wait: float) -> None:
        """Wait before the next update, cut short when the reply is closed: its final text must not wait for it."""
        sleeping = asyncio.ensure_future(self._retry.sleep(wait))
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait((sleeping, closing), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeping.cancel()
            closing.cancel()

    async def _discard(self) -> None:
        try:
            await self._writer.discard()
        except ChannelError as exc:
            logger.info("live reply could not be removed: %s", exc)
        except Exception:
            logger.exception("live reply removal crashed")

    async def _run(self) -> None:
        failures = 0
        while not self._closing.is_set():
            await _first_of(self._dirty, self._closing)
            if self._closing.is_set():
                return
            remaining = self._last_shown + self._settings.interval - self._clock()
            if remaining > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), remaining)
                if self._closing.is_set():
                    return
            self._dirty.clear()
            view = self.view()
            if not view.strip() or view == self._shown:
                continue
            try:
                await self._writer.show(view)
            except ChannelUnavailable as exc:
                failures += 1
                if failures >= self._retry.attempts:
                    logger.warning("live reply stopped updating after %d failures: %s", failures, exc)
                    self._broken = True
                    return
                wait = exc.retry_after if isinstance(exc, RateLimited) else self._retry.delay(failures)
                logger.info("live reply update failed (%s); next one in %.1fs", exc, wait)
                await self._backoff(wait)
                self._dirty.set()
                continue
            except ChannelError as exc:
                logger.warning("live reply stopped updating: %s", exc)
                self._broken = True
                return
            except Exception:
                logger.exception("live reply crashed")
                self._broken = True
                return
            failures = 0
            self._shown, self._last_shown = view, self._clock()


async def _first_of(*events: asyncio.Event) -> None:
    """Wait until any of the events is set."""
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
