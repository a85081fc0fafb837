"""One /sync answer's room events as published messages: invites gated, quotes fetched, files downloaded."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from bot.bus import InboundMessage
from bot.errors import BusClosed, ChannelError
from channels.base import Publish
from channels.matrix.calls import call_matrix
from channels.matrix.crypto import ENABLE_HINT, e2e_installed
from channels.matrix.invites import InviteGate
from channels.matrix.parse import Me, media_of, parse_event, quote_of, sealed_file_of
from channels.media import MediaRef, attach_media
from channels.numbered import NumberedChoices

logger = logging.getLogger(__name__)


def new_events(timeline: list[Any], me: str) -> list[dict[str, Any]]:
    """The timeline's raw events after the bot's own join, if it joined in this batch: earlier ones are history."""
    events = [getattr(event, "source", event) for event in timeline]
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.get("type") == "m.room.member" and event.get("state_key") == me:
            content = event.get("content") or {}
            previous = (event.get("unsigned") or {}).get("prev_content") or {}
            if content.get("membership") == "join" and previous.get("membership") != "join":
                return events[index + 1 :]
    return events


class SyncIntake:
    """Publishes what one account's /sync brings; a message is journaled before the next one is read."""

    def __init__(
        self,
        client: Any,
        publish: Publish,
        me: Me,
        media_dir: Path,
        invites: InviteGate,
        choices: NumberedChoices,
        stream: bool,
        is_direct: Callable[[str], bool],
        decrypting: bool = False,
    ) -> None:
        self._client = client
        self._publish = publish
        self._me = me
        self._media_dir = media_dir
        self._invites = invites
        self._choices = choices
        self._stream = stream
        self._is_direct = is_direct
        self._decrypting = decrypting
        self._encrypted_rooms: set[str] = set()  # rooms whose unreadable encrypted messages were logged

    async def invites(self, answer: Any) -> None:
        """Join or decline each invite the sync brought."""
        for room_id, invite in answer.rooms.invite.items():
            await self._invites.decide(room_id, invite.invite_state)

    async def messages(self, answer: Any) -> None:
        """Publish each room's new messages in order; only BusClosed is raised."""
        for room_id, room in answer.rooms.join.items():
            for event in new_events(room.timeline.events, self._me.user_id):
                await self._take_event(room_id, event)

    async def _take_event(self, room_id: str, event: dict[str, Any]) -> None:
        if event.get("type") == "m.room.encrypted":  # nio replaced every event it could decrypt
            self._undecrypted(room_id, str(event.get("event_id")))
            return
        try:
            message = parse_event(room_id, event, self._me, self._is_direct(room_id))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.info("matrix: dropping malformed event %s in %s: %s", event.get("event_id"), room_id, exc)
            return
        if message is None:
            return
        try:
            message = await self._complete(message, event)
            await self._publish(message)
        except BusClosed:
            raise
        except Exception:
            logger.exception("[%s] could not handle event %s", message.chat.session_key, event.get("event_id"))

    def _undecrypted(self, room_id: str, event_id: str) -> None:
        """Log an encrypted event left unread: each one when decrypting (its room key never came), else once a room."""
        if self._decrypting:
            logger.info("[matrix:%s] event %s not decrypted: the sender never shared its room key", room_id, event_id)
        elif room_id not in self._encrypted_rooms:
            self._encrypted_rooms.add(room_id)
            enable = "set channels.matrix.encryption: true" if e2e_installed() else ENABLE_HINT
            logger.info(
                "[matrix:%s] skipping encrypted messages: encryption is off (to read them, %s)", room_id, enable
            )

    async def _complete(self, message: InboundMessage, event: dict[str, Any]) -> InboundMessage:
        """The sender's name, a typed number as a press, the quoted event, the file; live replies as configured."""
        room = self._client.rooms.get(message.chat.chat_id)
        name = room.user_name(message.sender_id) if room is not None else None
        message = replace(message, sender_name=name or None, stream=self._stream)
        if message.edit_of is None and (pressed := self._choices.press(message.chat, message.text)):
            press, label = pressed
            return replace(message, press=press, text=label)
        if message.reply_to is not None and message.reply_to.platform_message_id:
            message = await self._with_quote(message, message.reply_to.platform_message_id)
        if message.edit_of is None and (media := media_of(event)) is not None:
            sealed = sealed_file_of(event)
            fetch = partial(self._download_sealed, sealed) if sealed else self._download
            message = await attach_media(message, [media], self._media_dir, fetch)
        return message

    async def _with_quote(self, message: InboundMessage, event_id: str) -> InboundMessage:
        """The replied-to event's text and author; a reply to the bot in a room counts as a mention."""
        try:
            got = await call_matrix(partial(self._client.room_get_event, message.chat.chat_id, event_id))
        except ChannelError as exc:
            logger.info("[%s] quoted event %s not fetched: %s", message.chat.session_key, event_id, exc)
            return message
        quote = quote_of(got.event.source, self._me)
        if quote is None:
            return message
        return replace(message, reply_to=quote, mentioned=message.mentioned or quote.from_bot)

    async def _download(self, media: MediaRef, target: Path) -> None:
        """The file from the media repository (authenticated media, `/_matrix/client/v1/media/download`)."""
        await call_matrix(partial(self._client.download, media.source, save_to=target))

    async def _download_sealed(self, sealed: dict[str, Any], media: MediaRef, target: Path) -> None:
        """An encrypted attachment: downloaded, checked against its SHA-256 and decrypted in place."""
        from nio.crypto.attachments import decrypt_attachment
        from nio.exceptions import EncryptionError

        await self._download(media, target)
        try:
            plain = decrypt_attachment(
                target.read_bytes(), sealed["key"]["k"], sealed["hashes"]["sha256"], sealed["iv"]
            )
        except (EncryptionError, KeyError, TypeError, ValueError) as exc:
            target.unlink(missing_ok=True)
            raise ChannelError(f"encrypted attachment not decrypted: {exc}") from exc
        target.write_bytes(plain)
