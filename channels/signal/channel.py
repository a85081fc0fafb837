"""Signal through a signal-cli daemon (`daemon --http`): JSON-RPC calls out, its event stream in."""

from __future__ import annotations

import asyncio
import base64
import logging
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.cancelling import cancel_and_wait
from bot.config.channels.signal import SignalConfig
from bot.errors import ChannelError
from bot.retry import RetryPolicy
from channels.abilities import ReactionStatus
from channels.base import Channel, Publish
from channels.dedupe import RECENT_DELIVERIES, SeenIds
from channels.media import MAX_MEDIA_BYTES, MediaRef, attach_media
from channels.numbered import NumberedChoices
from channels.signal.calls import SignalRpc
from channels.signal.events import EventStream
from channels.signal.parse import CHANNEL, Me, author_and_timestamp, is_group, parse_receive, target
from channels.signal.send import SignalSender

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

REACTIONS: dict[ReactionStatus, str] = {"seen": "👀", "done": "👍", "failed": "👎"}


class SignalChannel(Channel):
    """One Signal account served by a signal-cli daemon; a daemon that is down fails `start` (the gateway retries)."""

    name: ClassVar[str] = CHANNEL

    def __init__(
        self,
        publish: Publish,
        config: SignalConfig,
        media_dir: Path,
        retry: RetryPolicy | None = None,
        reconnect_delay: float = 1.0,
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._reconnect_delay = reconnect_delay
        self._me = Me(config.account, "", config.name)
        self._http: aiohttp.ClientSession | None = None
        self._rpc: SignalRpc | None = None
        self._sender: SignalSender | None = None
        self._events: EventStream | None = None
        self._seen = SeenIds(RECENT_DELIVERIES)
        self._choices = NumberedChoices()
        self._receipts: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        import aiohttp

        if not self._config.account:
            raise ChannelError("channels.signal needs account, the number signal-cli serves (+4915…)")
        http = self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        rpc = SignalRpc(http, self._config.url, self._config.account)
        try:
            await rpc.call("listGroups")  # the daemon answers, and serves this account
            self._me = Me(self._config.account, await self._own_uuid(rpc), self._config.name)
            self._rpc = rpc
            self._sender = SignalSender(rpc, self._retry, self._choices)
            events = EventStream(http, self._config.url, self._config.account, self._on_event, self._reconnect_delay)
            await events.start()
            self._events = events
        except BaseException:
            await self.stop()
            raise
        logger.info("signal: serving %s through %s", self._config.account, self._config.url)

    async def stop(self) -> None:
        await cancel_and_wait(*self._receipts)
        events, self._events = self._events, None
        http, self._http = self._http, None
        self._rpc = self._sender = None
        if events is not None:
            await events.stop()
        if http is not None:
            await http.close()

    async def send(self, message: OutboundMessage) -> None:
        if self._sender is None:
            raise ChannelError("signal is not started")
        await self._sender.send(message)

    async def show_typing(self, chat: ChatRef) -> None:
        """ "typing…" in the chat (Signal's apps show it for about 15 s, or until a message arrives)."""
        if self._rpc is None:
            return
        try:
            await self._rpc.call("sendTyping", **target(chat.chat_id))
        except ChannelError as exc:
            logger.debug("[%s] typing failed: %s", chat.session_key, exc)

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        """👀 when seen, then 👍 or 👎: Signal keeps one reaction per person, so each replaces the last."""
        quoted = author_and_timestamp(message_id)
        if self._rpc is None or quoted is None:
            return
        author, stamp = quoted
        params = {**target(chat.chat_id), "emoji": REACTIONS[status], "targetAuthor": author, "targetTimestamp": stamp}
        try:
            await self._rpc.call("sendReaction", **params)
        except ChannelError as exc:
            logger.info("[%s] reaction %s on %s failed: %s", chat.session_key, status, message_id, exc)

    async def _own_uuid(self, rpc: SignalRpc) -> str:
        """The account's ACI, so a mention that names only it still counts; empty when the daemon will not say."""
        try:
            statuses = await rpc.call("getUserStatus", recipient=[self._config.account])
        except ChannelError as exc:
            logger.info("signal: own uuid unknown (%s); mentions are matched by number", exc)
            return ""
        return next((str(s.get("uuid") or "") for s in statuses or [] if isinstance(s, dict)), "")

    async def _on_event(self, event: dict[str, Any]) -> None:
        """A `receive` event: a person's message is published (a typed number presses the chat's latest choices)."""
        incoming = parse_receive(event, self._me)
        if incoming is None:
            return
        message = incoming.message
        key = message.platform_message_id or ""
        if key in self._seen:
            logger.info("[%s] duplicate delivery of %s dropped", message.chat.session_key, key)
            return
        message = self._pressed(message)
        if incoming.media:
            fetch = partial(self._fetch, message.chat.chat_id)
            message = await attach_media(message, incoming.media, self._media_dir, fetch)
        await self._publish(message)
        self._seen.add(key)
        if message.edit_of is None:
            receipt = asyncio.create_task(self._mark_read(message), name=f"signal-read:{key}")
            self._receipts.add(receipt)
            receipt.add_done_callback(self._receipts.discard)

    async def _mark_read(self, message: InboundMessage) -> None:
        """The read receipt (the sender's double tick fills) for a message the inbox has."""
        quoted = author_and_timestamp(message.platform_message_id or "")
        if self._rpc is None or quoted is None:
            return
        author, stamp = quoted
        try:
            await self._rpc.call("sendReceipt", recipient=author, targetTimestamp=[stamp], type="read")
        except ChannelError as exc:
            logger.debug("[%s] read receipt failed: %s", message.chat.session_key, exc)

    def _pressed(self, message: InboundMessage) -> InboundMessage:
        if message.edit_of is not None or (pressed := self._choices.press(message.chat, message.text)) is None:
            return message
        press, label = pressed
        return replace(message, press=press, text=label, mentioned=True)

    async def _fetch(self, chat_id: str, media: MediaRef, target_path: Path) -> None:
        """getAttachment: the bytes signal-cli stored for the chat, base64 in the answer."""
        assert self._rpc is not None
        where = {"groupId": chat_id} if is_group(chat_id) else {"recipient": chat_id}
        answer = await self._rpc.call("getAttachment", id=media.source, **where)
        data = base64.b64decode(str((answer or {}).get("data") or ""))
        if len(data) > MAX_MEDIA_BYTES:
            raise ChannelError(f"attachment is larger than {MAX_MEDIA_BYTES:,} bytes")
        target_path.write_bytes(data)
