"""XMPP: one-to-one chats and rooms (MUC, answering when the nick is mentioned) become turns; live replies are
corrected in place (XEP-0308), files go over HTTP upload (XEP-0363)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from bot.bus import ChatRef, OutboundMessage
from bot.cancelling import cancel_and_wait
from bot.config.channels.xmpp import XmppConfig
from bot.errors import BusClosed, ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.formatting import split_for_platform
from channels.live_edits import EditedMessages
from channels.liveness import keep_connected
from channels.media import MediaRef, attach_media, download_capped
from channels.numbered import NumberedChoices
from channels.streaming import LiveReply, StreamSettings
from channels.xmpp.client import ACK_TIMEOUT, XmppClient
from channels.xmpp.files import no_upload_notice, upload
from channels.xmpp.live import XmppCorrections
from channels.xmpp.parse import CHANNEL, Stanza, parse_stanza, shared_file, without_link

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

MESSAGE_LIMIT = 60_000
"""Characters per message: far below the stanza limits servers set (Prosody: 256 KiB for a client), so a reply
is one message as a user sees it."""
CONNECT_TIMEOUT = 30.0


class XmppChannel(Channel):
    """One account: answers one-to-one chats, and room messages that mention its nick."""

    name: ClassVar[str] = CHANNEL

    def __init__(
        self,
        publish: Publish,
        config: XmppConfig,
        retry: RetryPolicy | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        ack_timeout: float = ACK_TIMEOUT,
        media_dir: Path | None = None,
    ) -> None:
        self._publish = publish
        self._config = config
        self._retry = retry or RetryPolicy()
        self._connect_timeout = connect_timeout
        self._ack_timeout = ack_timeout
        self._streaming = StreamSettings.of(config)
        self._choices = NumberedChoices()
        self._client: XmppClient | None = None
        self._lost = asyncio.Event()
        self._keeper: asyncio.Task[None] | None = None
        self._stopping = False
        self._media_dir = media_dir
        self._http: aiohttp.ClientSession | None = None

    @property
    def nick(self) -> str:
        """The bot's nick in rooms."""
        return self._config.nick or self._config.jid.partition("@")[0]

    @property
    def connected(self) -> bool:
        """Whether the bot is logged in and in its rooms (false while reconnecting)."""
        return self._client is not None and self._client.ready.is_set() and self._client.failure is None

    async def start(self) -> None:
        if not self._config.jid:
            raise ChannelError("channels.xmpp needs jid and password")
        self._stopping = False
        if self._media_dir is not None:
            import aiohttp

            self._http = aiohttp.ClientSession()
        await self._connect()
        self._keeper = asyncio.create_task(
            keep_connected(self._lost, self._connect, self._retry, "xmpp"), name="xmpp-reconnect"
        )

    async def stop(self) -> None:
        self._stopping = True
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            await cancel_and_wait(keeper)
        client, self._client = self._client, None
        if client is not None:
            client.disconnect()
            await asyncio.sleep(0)
        http, self._http = self._http, None
        if http is not None:
            await http.close()

    async def send(self, message: OutboundMessage) -> None:
        """The text (choices as numbered lines) as one message, then each file by HTTP upload (or a notice)."""
        client = self._require()
        to, kind = self._address(message.chat)
        text = self._choices.shown(message)
        what = f"[{message.chat.session_key}] send {message.id}"
        for chunk in split_for_platform(text, MESSAGE_LIMIT) if text.strip() else []:
            await self._retry.run(partial(client.send_checked, to, chunk, kind), what, (ChannelUnavailable,))
        for file in message.files:
            url = await self._retry.run(partial(upload, client, file), what, (ChannelUnavailable,))
            body = url or no_upload_notice(file.name or file.path.rsplit("/", 1)[-1])
            await self._retry.run(
                partial(client.send_checked, to, body, kind, url=url or ""), what, (ChannelUnavailable,)
            )

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """A message corrected in place (XEP-0308) as the reply grows; None when streaming is off."""
        if self._streaming.mode == "off" or self._client is None:
            return None
        to, kind = self._address(chat)
        writer = EditedMessages(XmppCorrections(self._client, to, kind), MESSAGE_LIMIT, lambda text: text)
        return LiveReply(writer, self._streaming, self._retry)

    def _require(self) -> XmppClient:
        if self._client is None:
            raise ChannelUnavailable("not connected to the XMPP server")
        return self._client

    def _address(self, chat: ChatRef) -> tuple[str, Literal["chat", "groupchat"]]:
        """Where a chat's messages go and as what: a room gets `groupchat`, a person `chat`."""
        return chat.chat_id, "groupchat" if chat.chat_id in self._rooms() else "chat"

    def _rooms(self) -> set[str]:
        return {room.lower() for room in self._config.rooms} | set(self._config.rooms)

    async def _connect(self) -> None:
        config = self._config
        client = XmppClient(
            config.jid,
            config.password.get_secret_value(),
            self.nick,
            config.rooms,
            self._on_stanza,
            self._on_state,
            self._ack_timeout,
        )
        client.enable_plaintext = config.tls == "off"
        client.enable_starttls = config.tls == "starttls"
        client.enable_direct_tls = config.tls == "direct"
        if config.tls == "off":
            client.allow_plain_login()
        self._client = client
        try:
            async with asyncio.timeout(self._connect_timeout):
                await client.connect(config.host or None, config.port if config.host else None)
                await client.ready.wait()
        except (OSError, TimeoutError) as exc:
            client.disconnect()
            where = config.host or config.jid.partition("@")[2]
            raise ChannelUnavailable(f"cannot reach {where}:{config.port}: {type(exc).__name__}: {exc}") from exc
        if client.failure:
            client.disconnect()
            raise ChannelError(f"{config.jid}: {client.failure}")
        logger.info("xmpp: logged in as %s", client.boundjid)

    def _on_state(self, connected: bool) -> None:
        if not connected and not self._stopping:
            self._lost.set()

    async def _fetch(self, media: MediaRef, target: Path) -> None:
        """Download a shared file (an HTTP-upload URL: the link itself grants access, XEP-0363 §5)."""
        assert self._http is not None
        await download_capped(self._http, media.source, target, {})

    async def _on_stanza(self, stanza: Stanza) -> None:
        message = parse_stanza(stanza, self._config.jid, self.nick)
        if message is None:
            return
        message = replace(message, stream=self._streaming.mode != "off")
        server = self._config.host or self._config.jid.partition("@")[2]
        if (media := shared_file(stanza, server)) is not None and self._media_dir is not None:
            message = await attach_media(without_link(message), [media], self._media_dir, self._fetch)
        if message.edit_of is None and (pressed := self._choices.press(message.chat, message.text)):
            press, label = pressed
            message = replace(message, press=press, text=label)
        try:
            await self._publish(message)
        except BusClosed:
            logger.info("xmpp: stopping; a message from %s is not taken", stanza.sender)
        except Exception:  # one bad message never stops the channel
            logger.exception("xmpp: could not take a message from %s", stanza.sender)
