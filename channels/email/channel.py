"""Email: mail read over IMAP becomes a turn (\\Seen only once it is journaled), replies go out over SMTP."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from dataclasses import replace
from email.utils import make_msgid
from functools import partial
from pathlib import Path
from typing import ClassVar

from bot.bus import Attachment, ChatRef, InboundMessage, OutboundMessage
from bot.cancelling import cancel_and_wait
from bot.config.channels.email import EmailConfig
from bot.errors import BusClosed, ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from bot.storage.private_file import write_private
from channels.base import Channel, Publish
from channels.email.mailbox import IDLE_RENEW, IMAP_TIMEOUT, Mailbox
from channels.email.parse import CHANNEL, Mail, MailFile, automated_reason, parse_mail, read_mail, thread_key
from channels.email.send import compose, send_mail
from channels.email.threads import ThreadBook
from channels.liveness import Liveness
from channels.media import MAX_MEDIA_BYTES, kind_of
from channels.numbered import NumberedChoices

logger = logging.getLogger(__name__)

_UNSAFE_IN_NAME = re.compile(r"[^\w.-]")


class EmailChannel(Channel):
    """Reads the IMAP folder (IDLE, else polling) and answers each mail in its thread by SMTP."""

    name: ClassVar[str] = CHANNEL

    def __init__(
        self,
        publish: Publish,
        config: EmailConfig,
        media_dir: Path,
        state_dir: Path,
        retry: RetryPolicy | None = None,
        mailbox: Mailbox | None = None,
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._mailbox = mailbox or Mailbox(config.imap)
        self._threads = ThreadBook(state_dir / "threads")
        self._choices = NumberedChoices()
        self._own = (config.smtp.sender or config.imap.user).lower()
        self._failed: set[str] = set()  # UIDs whose handling crashed: skipped until a restart, never marked seen
        # A search runs at least every IDLE renewal or poll interval; the watchdog restarts a reader quiet for longer.
        self.liveness = Liveness(max(IDLE_RENEW, config.imap.poll_interval) + IMAP_TIMEOUT)
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        imap, smtp = self._config.imap, self._config.smtp
        if not imap.host or not imap.user or not smtp.host or not smtp.sender:
            raise ChannelError("channels.email needs imap.host, imap.user, smtp.host and smtp.from")
        await self._mailbox.open()
        logger.info(
            "email: reading %s@%s/%s (%s)",
            imap.user,
            imap.host,
            imap.folder,
            "IDLE" if self._mailbox.idles else "polling",
        )
        self._reader = asyncio.create_task(self._read(), name="email-reader")

    async def stop(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            await cancel_and_wait(reader)
        await self._mailbox.close()

    async def send(self, message: OutboundMessage) -> None:
        """One mail per message, in the thread of the chat when it has one; else it starts a thread, which the
        user's reply continues (a typed number there presses its choices)."""
        chat = message.chat
        thread = self._threads.get(chat.thread_id) if chat.thread_id else None
        message_id = make_msgid(domain=self._config.smtp.sender.rpartition("@")[2] or None)
        if thread is None:
            message = replace(message, chat=replace(chat, thread_id=thread_key(message_id)))
        mail = compose(message, self._config.smtp.sender, thread, self._choices, message_id)
        what = f"[{chat.session_key}] send {message.id}"
        await self._retry.run(partial(send_mail, mail, self._config.smtp), what, (ChannelUnavailable,))
        if thread is None:
            self._threads.started(str(mail["Subject"]), message_id)
        else:
            self._threads.sent(str(chat.thread_id), message_id)

    async def _read(self) -> None:
        """Take every unseen mail, then wait for more; a lost connection, a refused command or a crash is met by
        reconnecting with backoff, so the reader never ends before the channel stops."""
        failures = 0
        while True:
            try:
                for uid in await self._mailbox.unseen():
                    self.liveness.beat()
                    if uid not in self._failed:
                        await self._take(uid)
                self.liveness.beat()
                failures = 0
                await self._mailbox.wait_for_mail()
                continue
            except BusClosed:
                return  # stopping: what is not marked seen is read again after the restart
            except ChannelUnavailable as exc:
                problem = f"IMAP connection lost ({exc})"
            except ChannelError as exc:
                problem = f"IMAP refused a command ({exc})"
            except Exception:  # the reader is this channel's supervised task: it logs and carries on
                logger.exception("email: the IMAP reader failed")
                problem = "the IMAP reader failed"
            failures += 1
            delay = self._retry.delay(min(failures, 10))
            logger.warning("email: %s; reconnecting in %.0fs", problem, delay)
            await self._mailbox.close()
            await self._retry.sleep(delay)
            await self._reopen()

    async def _reopen(self) -> None:
        try:
            await self._mailbox.open()
        except ChannelError as exc:
            logger.warning("email: IMAP reconnect failed: %s", exc)

    async def _take(self, uid: str) -> None:
        """Publish one mail (or drop it when automated); mark it \\Seen only after the publish returned."""
        raw = await self._mailbox.fetch(uid)
        try:
            message = await self._message_of(uid, raw)
        except (BusClosed, ChannelUnavailable):
            raise
        except Exception:
            logger.exception("email: could not read mail UID %s; left unseen", uid)
            self._failed.add(uid)
            return
        if message is not None:
            await self._publish(message)
        await self._mailbox.mark_seen(uid)

    async def _message_of(self, uid: str, raw: bytes) -> InboundMessage | None:
        """The mail as an InboundMessage; None for mail never to be answered (loops, bounces, malformed)."""
        parsed = read_mail(raw)
        reason = automated_reason(parsed, self._own)
        if reason is not None:
            logger.info("email: not answering mail UID %s from %s: %s", uid, parsed.get("From", "?"), reason)
            return None
        mail = parse_mail(parsed)
        if mail is None:
            logger.warning("email: mail UID %s has no sender address or Message-ID; dropped", uid)
            return None
        chat = ChatRef(CHANNEL, mail.sender, self._threads.note(mail))
        text = mail.text if len(mail.references) > 1 else f"Subject: {mail.subject}\n\n{mail.text}".strip()
        if (pressed := self._choices.press(chat, mail.text)) is not None:
            press, label = pressed
            return InboundMessage(
                chat, mail.sender, label, sender_name=mail.sender_name, press=press, platform_message_id=mail.message_id
            )
        message = InboundMessage(
            chat,
            sender_id=mail.sender,
            text=text,
            sender_name=mail.sender_name,
            is_direct=True,
            mentioned=True,
            platform_message_id=mail.message_id,
        )
        return self._with_files(message, mail)

    def _with_files(self, message: InboundMessage, mail: Mail) -> InboundMessage:
        """The mail's attachments saved in the chat's inbox folder; one too large is a note instead."""
        folder = self._media_dir / message.chat.folder
        attachments, notes = [], []
        for file in mail.files:
            if len(file.data) > MAX_MEDIA_BYTES:
                notes.append(f"[a file of {len(file.data):,} bytes ({file.name}) was attached but is too large]")
                continue
            attachments.append(self._save(folder, mail, file))
        text = "\n".join([message.text, *notes]).strip()
        return replace(message, text=text, attachments=tuple(attachments))

    @staticmethod
    def _save(folder: Path, mail: Mail, file: MailFile) -> Attachment:
        stem = hashlib.sha256(mail.message_id.encode() + file.name.encode()).hexdigest()[:12]
        target = folder / f"{stem}-{_UNSAFE_IN_NAME.sub('_', Path(file.name).name)}"
        write_private(target, file.data)
        return Attachment(str(target), file.mime_type, kind_of(file.mime_type), file.name)
