"""Matrix through matrix-nio: a long-polled /sync resumed from its stored `next_batch` in, room events out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from bot.bus import ChatRef, OutboundMessage
from bot.cancelling import cancel_and_wait
from bot.config.channels.matrix import MatrixConfig
from bot.errors import BusClosed, ChannelError, ChannelUnavailable, RateLimited
from bot.retry import RetryPolicy
from bot.storage.recent import RecentMap
from channels.abilities import InviteVerdict, ReactionStatus
from channels.base import Channel, Publish
from channels.live_edits import EditedMessages
from channels.liveness import Liveness
from channels.matrix.calls import call_matrix
from channels.matrix.crypto import e2e_installed, encryption_on, key_chores, private_store, seal
from channels.matrix.intake import SyncIntake
from channels.matrix.invites import InviteGate, allowlist_verdict
from channels.matrix.live import MatrixEdits
from channels.matrix.parse import Me
from channels.matrix.send import MAX_MESSAGE_LENGTH, MatrixSender, event_id_of
from channels.matrix.sync_state import SyncState, SyncStateFile
from channels.numbered import NumberedChoices
from channels.streaming import LiveReply, StreamSettings

logger = logging.getLogger(__name__)

SYNC_BACKOFF = RetryPolicy(base_delay=0.5, max_delay=60.0)
REACTIONS: dict[ReactionStatus, str] = {"seen": "👀", "done": "✅", "failed": "❌"}
ROOM_SYNC_GRACE = 10.0  # seconds past one long poll to wait for a room just joined to be synced
MARKS_KEPT = 1000  # the user messages whose reaction the bot may still change


def _stated(value: str, key: str) -> str:
    if not value:
        raise ChannelError(f"channels.matrix.{key} is empty; set it in the config")
    return value


class MatrixChannel(Channel):
    """Syncs one account: DMs and rooms, threads as sessions, edits as live replies, files via the media repository."""

    name: ClassVar[str] = "matrix"

    def __init__(
        self,
        publish: Publish,
        config: MatrixConfig,
        media_dir: Path,
        state_file: Path,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        crypto_dir: Path | None = None,
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._state_file = SyncStateFile(state_file)
        self._crypto_dir = crypto_dir or state_file.parent / "crypto"
        self._encrypted = False
        self._synced = asyncio.Condition()  # notified after each /sync
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._streaming = StreamSettings.of(config)
        self._verdict: InviteVerdict = allowlist_verdict(frozenset(config.allow_from))
        self._choices = NumberedChoices()
        self._marks: RecentMap[tuple[str, str], str] = RecentMap(MARKS_KEPT)  # (room, event) -> reaction event
        self._client: Any = None
        self._sender: MatrixSender | None = None
        self._syncer: asyncio.Task[None] | None = None
        self._state: SyncState | None = None
        self.liveness = Liveness(config.sync_timeout)

    def gate_invites(self, verdict: InviteVerdict) -> None:
        """Join the rooms of inviters `verdict` accepts; decline the others with its text (their pairing code)."""
        self._verdict = verdict

    async def start(self) -> None:
        from nio import AsyncClient, AsyncClientConfig

        homeserver = _stated(self._config.homeserver, "homeserver")
        user_id = _stated(self._config.user_id, "user_id")
        token, password = self._config.access_token.get_secret_value(), self._config.password.get_secret_value()
        if not token and not password:
            raise ChannelError("channels.matrix needs access_token or password; set one in the config")
        # Retries are ours (per chat, honouring retry_after_ms); nio's own would sleep inside a send.
        self._encrypted = encryption_on(self._config.encryption, e2e_installed())
        settings = AsyncClientConfig(
            max_limit_exceeded=0, max_timeouts=0, request_timeout=60, encryption_enabled=self._encrypted
        )
        store = str(private_store(self._crypto_dir)) if self._encrypted else ""
        client = AsyncClient(homeserver, user_id, store_path=store, config=settings)
        try:
            state = await self._log_in(client, token, password)
            who = await call_matrix(client.whoami)
            if who.user_id != user_id:
                raise ChannelError(f"channels.matrix.user_id is {user_id}, but the token belongs to {who.user_id}")
            state = self._own_device(client, state, who.device_id)
            name = await call_matrix(partial(client.get_displayname, user_id))
        except BaseException:
            await client.close()
            raise
        me = Me(user_id, name.displayname or None)
        self._client, self._state = client, state
        self._sender = MatrixSender(client, call_matrix, self._retry, self._choices, self._is_direct, self._room_synced)
        intake = SyncIntake(
            client,
            self._publish,
            me,
            self._media_dir,
            InviteGate(client, me, lambda inviter, named: self._verdict(inviter, named)),
            self._choices,
            self._streaming.mode != "off",
            self._is_direct,
            self._encrypted,
        )
        try:
            answer = await self._sync_once(since=state.next_batch, wait_ms=0)
            await intake.invites(answer)  # rooms the bot was invited to while away are joined before it is ready
        except BaseException:
            await self.stop()
            raise
        self.liveness.beat()
        self._syncer = asyncio.create_task(self._sync(intake, answer), name="matrix-sync")

    async def stop(self) -> None:
        syncer, self._syncer = self._syncer, None
        if syncer is not None:
            await cancel_and_wait(syncer)
        client, self._client, self._sender = self._client, None, None
        if client is not None:
            await client.close()

    async def _log_in(self, client: Any, token: str, password: str) -> SyncState:
        """The configured token, else the device token a password login saved earlier, else a new login (saved)."""
        state = self._state_file.load(client.user_id)
        if token or state.access_token:
            client.access_token = token or state.access_token
            client.device_id = state.device_id if not token else None
            return state
        answer = await call_matrix(partial(client.login, password, device_name=self._config.device_name))
        # The sync position is the account's, not the device's: a new login resumes where the last one stopped.
        state = SyncState(client.user_id, answer.device_id, answer.access_token, state.next_batch)
        self._state_file.save(state)
        logger.info("matrix: logged in as %s (device %s)", client.user_id, answer.device_id)
        return state

    def _own_device(self, client: Any, state: SyncState, device_id: str | None) -> SyncState:
        """Keep the token's device id with the sync state; with encryption, open that device's crypto store."""
        if device_id and device_id != state.device_id:
            state = replace(state, device_id=device_id)
            self._state_file.save(state)
        if self._encrypted:
            if not device_id:
                raise ChannelError("channels.matrix.encryption needs a device; the homeserver named none for the token")
            if client.olm is None:  # a password login has opened the store already
                client.restore_login(client.user_id, device_id, client.access_token)
            seal(self._crypto_dir)
            logger.info("matrix: end-to-end encryption on for %s (device %s)", client.user_id, device_id)
        return state

    async def _sync_once(self, since: str | None, wait_ms: int) -> Any:
        """One /sync (the first after a start asks for the full state, so the client knows who is in each room),
        then, with encryption, the key chores it calls for."""
        full_state = True if since and self._syncer is None else None
        answer = await call_matrix(partial(self._client.sync, timeout=wait_ms, since=since, full_state=full_state))
        if self._encrypted:
            await key_chores(self._client)
        async with self._synced:
            self._synced.notify_all()
        return answer

    async def _room_synced(self, room_id: str) -> None:
        """With encryption, wait for the sync that brings a room just joined: nio sends only to rooms it has synced."""
        if not self._encrypted:
            return

        def known() -> bool:
            return self._client is None or room_id in self._client.rooms

        try:
            async with self._synced:
                await asyncio.wait_for(self._synced.wait_for(known), self._config.sync_timeout + ROOM_SYNC_GRACE)
        except TimeoutError:
            raise ChannelError(f"matrix: room {room_id} never came in a sync; is the bot in it?") from None

    async def _sync(self, intake: SyncIntake, answer: Any) -> None:
        """Publish what each /sync brought, then save its `next_batch`: a crash re-reads, never loses, a batch.

        The account's very first sync (no token yet) is history: its invites count, its old messages do not.
        A failed sync is retried with backoff (or after the homeserver's `retry_after_ms`)."""
        assert self._state is not None
        failures = 0
        while True:
            since = self._state.next_batch
            if since is not None:
                try:
                    await intake.messages(answer)
                except BusClosed:
                    logger.info("matrix: stopping intake; the events stay on the homeserver from %s", since)
                    return
            self._state = self._state_file.advance(self._state, answer.next_batch)
            while True:
                try:
                    answer = await self._sync_once(self._state.next_batch, round(self._config.sync_timeout * 1000))
                    break
                except ChannelError as exc:
                    failures += 1
                    delay = exc.retry_after if isinstance(exc, RateLimited) else SYNC_BACKOFF.delay(min(failures, 8))
                    logger.warning("matrix: sync failed (%s); retrying in %.1fs", exc, delay)
                    await self._sleep(delay)
            failures = 0
            self.liveness.beat()
            await intake.invites(answer)

    def _is_direct(self, room_id: str) -> bool:
        """A room of two (the bot and one person) is a direct chat."""
        room = self._client.rooms.get(room_id) if self._client is not None else None
        return room is not None and room.member_count <= 2

    async def send(self, message: OutboundMessage) -> None:
        if self._sender is None:
            raise ChannelUnavailable("matrix is not connected")
        await self._sender.send(message)

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """A message edited in place (`m.replace`) as the reply grows; None when streaming is off."""
        if self._streaming.mode == "off" or self._sender is None:
            return None
        sender = self._sender
        answering = event_id_of(reply_to) if reply_to else None
        quote = answering if answering and (chat.thread_id or not self._is_direct(chat.chat_id)) else None

        def posted(event_id: str) -> None:
            if answering:
                sender.remember_reply(answering, event_id)

        edits = MatrixEdits(sender, call_matrix, self._client, chat, posted)
        writer = EditedMessages(edits, MAX_MESSAGE_LENGTH, lambda text: text, quote)
        return LiveReply(writer, self._streaming, self._retry)

    async def show_typing(self, chat: ChatRef) -> None:
        """The room's typing notice for a few seconds (a new message ends it)."""
        if self._client is not None:
            await call_matrix(partial(self._client.room_typing, chat.chat_id, True, timeout=10_000))

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        """An `m.reaction` annotation: 👀, then ✅ or ❌ in its place; a failure is logged, never raised."""
        if self._client is None or message_id.count("@"):
            return  # an edit or a press has no message of its own to mark
        key = (chat.chat_id, message_id)
        try:
            if (earlier := self._marks.pop(key, None)) is not None:
                await call_matrix(partial(self._client.room_redact, chat.chat_id, earlier))
            content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": message_id, "key": REACTIONS[status]}}
            sent = await call_matrix(partial(self._client.room_send, chat.chat_id, "m.reaction", content))
        except ChannelError as exc:
            logger.info("[%s] reaction %s on %s failed: %s", chat.session_key, status, message_id, exc)
            return
        self._marks[key] = sent.event_id
