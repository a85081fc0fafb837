"""Discord through discord.py: gateway events in, REST replies out; each thread is a session of its own."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from bot.bus import ChatRef, OutboundMessage
from bot.commands.catalogue import CommandSpec
from bot.config.channels.discord import DiscordConfig
from bot.errors import ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from channels.abilities import ReactionStatus
from channels.base import Channel, Publish
from channels.catchup import RecentChats
from channels.discord.calls import call_discord, translate_error
from channels.discord.intake import DiscordInbound
from channels.discord.live import DiscordEdits
from channels.discord.menu import command_payloads, same_commands
from channels.discord.replies import OpenInteractions
from channels.discord.send import MAX_MESSAGE_LENGTH, DiscordSender, as_discord_markdown
from channels.live_edits import EditedMessages, balance_fences
from channels.sent_replies import SentReplies
from channels.streaming import LiveReply, StreamSettings

logger = logging.getLogger(__name__)

READY_TIMEOUT = 60.0
REACTIONS: dict[ReactionStatus, str] = {
    "seen": "\N{EYES}",
    "done": "\N{WHITE HEAVY CHECK MARK}",
    "failed": "\N{CROSS MARK}",
}


def point_discord_py_at(api_base: str, gateway_url: str) -> None:
    """Send discord.py's REST calls to `api_base` and its first gateway connection to `gateway_url`."""
    import yarl
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    # discord.py has no per-client setting for either: every Route and every fresh gateway session
    # read these class attributes. Set from the config at start, they hold for the whole process.
    Route.BASE = api_base.rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


class DiscordChannel(Channel):
    """A discord.py Client with the message-content intent; discord.py reconnects and resumes by itself."""

    name: ClassVar[str] = "discord"

    def __init__(
        self,
        publish: Publish,
        config: DiscordConfig,
        media_dir: Path,
        retry: RetryPolicy | None = None,
        account: str | None = None,
    ) -> None:
        """`account` names this bot among the platform's (None: the default one); its chats carry it."""
        self.account = account
        self._config = config
        self._retry = retry or RetryPolicy()
        self._streaming = StreamSettings.of(config)
        self._client: Any = None
        self._sender: DiscordSender | None = None
        self._gateway: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._interactions = OpenInteractions()
        self._replies: SentReplies[str] = SentReplies()
        stream = self._streaming.mode != "off"
        self._inbound = DiscordInbound(publish, media_dir, self._interactions, stream, self.own)

    def remember_chats(self, chats: RecentChats) -> None:
        """Record DMs in `chats`, and at start read what they were sent while the bot was down."""
        self._inbound.active = chats

    async def start(self) -> None:
        import discord

        token = self._config.token.get_secret_value()
        if not token:
            raise ChannelError("channels.discord.token is empty; set DISCORD_BOT_TOKEN or the config key")
        point_discord_py_at(self._config.api_base, self._config.gateway_url)
        intents = discord.Intents.none()
        intents.guilds = intents.guild_messages = intents.dm_messages = intents.message_content = True
        # Replies ping the person asked, never @everyone, roles or users the model happens to write.
        mentions = discord.AllowedMentions(everyone=False, roles=False, users=False, replied_user=True)
        self._client = discord.Client(intents=intents, allowed_mentions=mentions)
        self._inbound.client = self._client
        self._sender = DiscordSender(self._client, call_discord, self._retry, self._interactions, self._replies)
        for event, handler in (
            ("on_connect", self._on_connect),
            ("on_disconnect", self._on_disconnect),
            ("on_resumed", self._on_resumed),
            ("on_message", self._inbound.on_message),
            ("on_raw_message_edit", self._inbound.on_edit),
            ("on_interaction", self._inbound.on_interaction),
        ):
            setattr(self._client, event, handler)
        self._ready.clear()
        try:
            await self._connect(token)
        except BaseException:
            await self.stop()
            raise
        await self._inbound.catch_up()

    async def stop(self) -> None:
        client, self._client = self._client, None
        gateway, self._gateway = self._gateway, None
        if client is not None:
            await client.close()
        if gateway is not None:
            gateway.cancel()
            await asyncio.gather(gateway, return_exceptions=True)

    async def send(self, message: OutboundMessage) -> None:
        """Post, answer the open interaction, or edit in place (`edit_of`, `revises_reply_to`); see DiscordSender."""
        if self._sender is None:
            raise ChannelUnavailable("Discord is not connected")
        await self._sender.send(message)

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """One message edited as the reply grows (Discord has no drafts); None with `streaming: off`."""
        if self._streaming.mode == "off":
            return None
        target = self._client.get_partial_messageable(int(chat.thread_id or chat.chat_id))
        edits = DiscordEdits(target, call_discord, self._replies, reply_to)
        writer = EditedMessages(edits, MAX_MESSAGE_LENGTH, as_discord_markdown, reply_to, balance_fences)
        return LiveReply(writer, self._streaming, self._retry)

    async def show_typing(self, chat: ChatRef) -> None:
        """Show "typing…" in the channel or thread (Discord clears it after 10 s or at the next message)."""
        target = self._client.get_partial_messageable(int(chat.thread_id or chat.chat_id))
        await call_discord(target.typing)

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        """👀 once accepted, then ✅ or ❌ in its place; slash commands and presses have no message to mark."""
        if self._interactions.get(message_id) is not None:
            return
        target = self._client.get_partial_messageable(int(chat.thread_id or chat.chat_id))
        message = target.get_partial_message(int(message_id))
        if status != "seen":
            await call_discord(lambda: message.remove_reaction(REACTIONS["seen"], self._client.user))
        await call_discord(lambda: message.add_reaction(REACTIONS[status]))

    async def dismiss(self, chat: ChatRef, message_id: str) -> None:
        """A slash command that gets no answer (its sender is not served) loses its "thinking…" response."""
        if self._sender is not None:
            await self._sender.withdraw(message_id)

    async def set_commands(self, commands: Sequence[CommandSpec], privileged: Sequence[str] = ()) -> None:
        """Register the slash commands globally, or in each of `command_guilds` (instant there); skip when unchanged.

        With `command_guilds`, global commands from before are removed: a server would list both.
        """
        guilds: list[int | None] = list(self._config.command_guilds)
        for guild in guilds or [None]:
            await self._register(command_payloads(commands, in_guild=guild is not None), guild)
        if guilds:
            await self._register([], None)

    async def _register(self, wanted: list[dict[str, Any]], guild: int | None) -> None:
        """Make the commands of `guild` (None: global) exactly `wanted`, when they differ."""
        http, application = self._client.http, self._client.application_id
        if guild is None:
            registered = await call_discord(lambda: http.get_global_commands(application))
            if not same_commands(registered, wanted):
                await call_discord(partial(http.bulk_upsert_global_commands, application, wanted))
                logger.info("discord: %d global command(s) registered", len(wanted))
        else:
            registered = await call_discord(partial(http.get_guild_commands, application, guild))
            if not same_commands(registered, wanted):
                await call_discord(partial(http.bulk_upsert_guild_commands, application, guild, wanted))
                logger.info("discord: %d command(s) registered in guild %s", len(wanted), guild)

    async def _connect(self, token: str) -> None:
        """Log in over REST, then run the gateway in a task; return once it sends READY."""
        await call_discord(lambda: self._client.login(token))
        self._gateway = asyncio.create_task(self._client.connect(reconnect=True), name="discord-gateway")
        ready = asyncio.create_task(self._ready.wait())
        try:
            await asyncio.wait({ready, self._gateway}, timeout=READY_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if self._ready.is_set():
            self._gateway.add_done_callback(self._gateway_ended)
            return
        if not self._gateway.done():
            raise ChannelUnavailable(f"the gateway sent no READY within {READY_TIMEOUT:.0f}s")
        if (failure := self._gateway.exception()) is not None:
            raise translate_error(failure) from failure
        raise ChannelUnavailable("the gateway closed before READY")

    async def _on_connect(self) -> None:
        """READY: a new gateway session (at start, or when discord.py could not resume one)."""
        if self._ready.is_set():
            logger.warning("discord: gateway session replaced (resume refused); events meanwhile are lost")
        self._ready.set()

    async def _on_disconnect(self) -> None:
        if self._client is not None and not self._client.is_closed():
            logger.warning("discord: gateway connection lost")

    async def _on_resumed(self) -> None:
        logger.info("discord: gateway reconnected and resumed; missed events are replayed")

    def _gateway_ended(self, task: asyncio.Task[None]) -> None:
        if task is not self._gateway or task.cancelled():
            return
        failure = task.exception()
        reason = translate_error(failure) if failure else "closed"
        logger.error("discord: gateway stopped for good (%s); restart relaybot once it is fixed", reason)
