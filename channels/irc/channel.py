"""IRC: private messages and channel lines addressed to the bot's nick become turns; replies go out as lines."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

from bot.bus import OutboundMessage
from bot.cancelling import cancel_and_wait
from bot.config.channels.irc import IrcConfig
from bot.errors import BusClosed, ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.irc.client import ACK_TIMEOUT, IrcClient
from channels.irc.lines import MESSAGE_BYTES, prefix_bytes
from channels.irc.parse import CHANNEL, Line, parse_line
from channels.irc.send import outbound_lines, send_lines
from channels.liveness import keep_connected
from channels.numbered import NumberedChoices

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 30.0
"""Seconds from opening the connection to the end of registration (the MOTD)."""
HOSTLEN = 63
"""The longest host a server shows in the bot's prefix (RFC 2812 §2.3.1: a hostname of up to 63 characters)."""


class IrcChannel(Channel):
    """One nick on one network: answers private messages, and channel lines that address it by nick."""

    name: ClassVar[str] = CHANNEL

    def __init__(
        self,
        publish: Publish,
        config: IrcConfig,
        retry: RetryPolicy | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        ack_timeout: float = ACK_TIMEOUT,
    ) -> None:
        self._publish = publish
        self._config = config
        self._retry = retry or RetryPolicy()
        self._connect_timeout = connect_timeout
        self._ack_timeout = ack_timeout
        self._choices = NumberedChoices()
        self._client: IrcClient | None = None
        self._lost = asyncio.Event()
        self._keeper: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        if not self._config.server or not self._config.nick:
            raise ChannelError("channels.irc needs server and nick")
        self._stopping = False
        await self._connect()
        self._keeper = asyncio.create_task(
            keep_connected(self._lost, self._connect, self._retry, f"irc {self._config.server}"), name="irc-reconnect"
        )

    async def stop(self) -> None:
        self._stopping = True
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            await cancel_and_wait(keeper)
        client, self._client = self._client, None
        if client is not None and client.connected:
            await client.quit("relaybot stopping")

    async def send(self, message: OutboundMessage) -> None:
        """The message's lines to its chat (a channel or a nick), window by window, each confirmed by the server."""
        target = message.chat.chat_id
        lines = outbound_lines(message, self._choices, self._budget(target))
        await send_lines(message, lines, lambda window: self._post(target, window), self._retry)

    @property
    def nick(self) -> str:
        """The nick the bot has now (the server may have given it another at registration)."""
        return self._client.nickname if self._client is not None else self._config.nick

    @property
    def connected(self) -> bool:
        """Whether the bot is registered on the server and has sent its joins (false while reconnecting)."""
        return self._client is not None and self._client.connected and self._client.ready.is_set()

    async def _post(self, target: str, lines: Sequence[str]) -> None:
        client = self._client
        if client is None:
            raise ChannelUnavailable("not connected to the IRC server")
        await client.post(target, lines)

    def _budget(self, target: str) -> int:
        """Bytes of text one line may carry to `target`, after the prefix the server puts before it."""
        client = self._client
        me = client.users.get(client.nickname, {}) if client is not None else {}
        user = me.get("username") or f"~{self._config.nick}"
        host = me.get("hostname") or "x" * HOSTLEN
        return MESSAGE_BYTES - prefix_bytes(self.nick, user, host, target)

    async def _connect(self) -> None:
        """A new connection, registered (SASL or NickServ) and in its channels; ChannelUnavailable when it fails."""
        config = self._config
        client = IrcClient(
            config.nick,
            self._on_line,
            self._on_state,
            account=config.username,
            password=config.password.get_secret_value(),
            sasl=config.sasl,
            channels=config.channels,
            ack_timeout=self._ack_timeout,
        )
        self._client = client
        try:
            async with asyncio.timeout(self._connect_timeout):
                await client.connect(config.server, config.port, tls=config.tls, tls_verify=config.tls)
                await client.ready.wait()
        except (OSError, TimeoutError) as exc:
            await client.disconnect(expected=True)
            raise ChannelUnavailable(
                f"cannot reach {config.server}:{config.port}: {type(exc).__name__}: {exc}"
            ) from exc
        logger.info("irc: connected to %s:%s as %s", config.server, config.port, client.nickname)

    def _on_state(self, connected: bool) -> None:
        if not connected and not self._stopping:
            self._lost.set()

    async def _on_line(self, line: Line) -> None:
        """Publish one PRIVMSG (a typed number presses the chat's latest choices); one that fails is logged."""
        client = self._client
        chantypes = client.chantypes if client is not None else "#&"
        message = parse_line(line, self.nick, self._config.server, chantypes)
        if message is None:
            return
        if pressed := self._choices.press(message.chat, message.text):
            press, label = pressed
            message = replace(message, press=press, text=label)
        try:
            await self._publish(message)
        except BusClosed:
            logger.info("irc: stopping; a line from %s in %s is not taken", line.sender, line.target)
        except Exception:  # one bad line never stops the channel
            logger.exception("irc: could not take a line from %s in %s", line.sender, line.target)
