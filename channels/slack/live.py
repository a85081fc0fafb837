"""Slack's live replies: its streaming API (chat.startStream/appendStream/stopStream) in threads and DMs,
falling back to a posted message edited with chat.update where the stream is refused."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.bus import ChatRef
from bot.errors import ChannelError, ChannelUnavailable
from channels.live_edits import EditedMessages
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)

Posted = Callable[[str], Awaitable[None]]
"""Told the ts of each message a live reply posts."""


async def _unheard(ts: str) -> None:
    """The default `Posted`: nobody listens."""


class SlackEdits:
    """EditsMessages for one Slack conversation (or thread)."""

    def __init__(self, client: Any, call: PlatformCall, chat: ChatRef, posted: Posted = _unheard) -> None:
        self._client = client
        self._call = call
        self._chat = chat
        self._posted = posted

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        answer = await self._call(
            lambda: self._client.chat_postMessage(
                channel=self._chat.chat_id, text=text, thread_ts=self._chat.thread_id, mrkdwn=markup
            )
        )
        await self._posted(str(answer["ts"]))
        return str(answer["ts"])

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        await self._call(lambda: self._client.chat_update(channel=self._chat.chat_id, ts=message_id, text=text))

    async def delete(self, message_id: str) -> None:
        await self._call(lambda: self._client.chat_delete(channel=self._chat.chat_id, ts=message_id))


class SlackStream:
    """A LiveWriter on Slack's append-only stream; text that no longer extends what was streamed goes by chat.update."""

    finishes_in_place = True

    def __init__(
        self,
        client: Any,
        call: PlatformCall,
        chat: ChatRef,
        thread_ts: str,
        recipient: tuple[str, str] | None,
        render: Callable[[str], str],
        fallback: EditedMessages,
        posted: Posted = _unheard,
    ) -> None:
        self._client = client
        self._call = call
        self._channel = chat.chat_id
        self._thread_ts = thread_ts
        self._recipient = recipient
        self._render = render
        self._fallback = fallback
        self._posted = posted
        self._refused = False
        self._ts: str | None = None
        self._streamed = ""
        self._stopped = False

    async def show(self, text: str) -> None:
        if self._refused:
            await self._fallback.show(text)
        elif self._ts is None:
            await self._start(text)
        elif self._stopped or not text.startswith(self._streamed):
            await self._stop()
            await self._update(text, markup=False)
        elif tail := text[len(self._streamed) :]:
            await self._call(
                lambda: self._client.chat_appendStream(channel=self._channel, ts=self._ts, markdown_text=tail)
            )
            self._streamed = text

    async def finish(self, text: str) -> bool:
        if self._refused or self._ts is None:
            return await self._fallback.finish(text)
        if not self._stopped and text.startswith(self._streamed):
            tail = text[len(self._streamed) :] or None
            await self._call(
                lambda: self._client.chat_stopStream(channel=self._channel, ts=self._ts, markdown_text=tail)
            )
            self._stopped, self._streamed = True, text
            return True
        await self._stop()
        await self._update(self._render(text), markup=True)
        return True

    async def discard(self) -> None:
        if self._refused or self._ts is None:
            await self._fallback.discard()
            return
        await self._stop()
        await self._call(lambda: self._client.chat_delete(channel=self._channel, ts=self._ts))

    async def _start(self, text: str) -> None:
        extra = {}
        if self._recipient is not None:
            extra = {"recipient_user_id": self._recipient[0], "recipient_team_id": self._recipient[1]}
        try:
            answer = await self._call(
                lambda: self._client.chat_startStream(
                    channel=self._channel, thread_ts=self._thread_ts, markdown_text=text, **extra
                )
            )
        except ChannelUnavailable:
            raise
        except ChannelError as exc:
            logger.info("slack: streaming refused in %s (%s); editing a message instead", self._channel, exc)
            self._refused = True
            await self._fallback.show(text)
            return
        self._ts, self._streamed = str(answer["ts"]), text
        await self._posted(self._ts)

    async def _stop(self) -> None:
        if not self._stopped:
            await self._call(lambda: self._client.chat_stopStream(channel=self._channel, ts=self._ts))
            self._stopped = True

    async def _update(self, text: str, markup: bool) -> None:
        await self._call(lambda: self._client.chat_update(channel=self._channel, ts=self._ts, text=text))
