"""One IMAP connection to the configured folder: unseen mail, its bytes, the \\Seen flag, waiting for more."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from bot.config.channels.email import ImapConfig
from bot.errors import ChannelError, ChannelUnavailable
from channels.email.calls import call_imap, imap_ok

logger = logging.getLogger(__name__)

IMAP_TIMEOUT = 30.0
IDLE_RENEW = 29 * 60.0  # RFC 2177: servers may drop a client idle for 30 minutes
_UIDNEXT = re.compile(rb"\[UIDNEXT (\d+)\]")
_EXISTS = re.compile(rb"^(\d+) EXISTS")

Snapshot = tuple[bytes | None, bytes | None]
"""What a SELECT says of the folder: its UIDNEXT and message count; if either moved, mail came in."""


class Mailbox:
    """The folder over IMAP: IDLE where the server offers it, else a wait of `poll_interval` between searches."""

    def __init__(self, config: ImapConfig, poll: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._config = config
        self._poll = poll
        self._client: Any = None
        self._lost = asyncio.Event()
        self._selected: Snapshot = (None, None)
        self.idles = False

    async def open(self) -> None:
        """Connect, log in and select the folder; ChannelError when the login or folder is refused."""
        from aioimaplib import IMAP4, IMAP4_SSL

        config = self._config
        kind = IMAP4_SSL if config.tls else IMAP4
        self._lost = lost = asyncio.Event()
        client = kind(host=config.host, port=config.port, timeout=IMAP_TIMEOUT, conn_lost_cb=lambda exc: lost.set())
        self._client = client
        try:
            await call_imap(client.wait_hello_from_server(), "connect")
            login = await call_imap(client.login(config.user, config.password.get_secret_value()), "login")
            imap_ok(login.result, login.lines, "login")
            await self._select()
        except BaseException:
            await self.close()
            raise
        self.idles = client.has_capability("IDLE")

    async def _select(self) -> bool:
        """SELECT the folder (again); whether its UIDNEXT or message count moved since the last SELECT."""
        folder = self._config.folder
        selected = await self._command(lambda client: client.select(folder), f"select {folder}")
        imap_ok(selected.result, selected.lines, f"select {folder}")
        lines = [bytes(line) for line in selected.lines]
        uidnext = next((found[1] for line in lines if (found := _UIDNEXT.search(line))), None)
        exists = next((found[1] for line in reversed(lines) if (found := _EXISTS.match(line))), None)
        moved, self._selected = self._selected != (uidnext, exists), (uidnext, exists)
        return moved

    async def unseen(self) -> list[str]:
        """The UIDs of the folder's unseen mail, oldest first."""
        answer = await self._command(lambda client: client.uid_search("UNSEEN"), "search")
        imap_ok(answer.result, answer.lines, "search")
        return bytes(answer.lines[0]).decode().split() if answer.lines else []

    async def fetch(self, uid: str) -> bytes:
        """The whole mail, read without setting \\Seen (BODY.PEEK)."""
        answer = await self._command(lambda client: client.uid("fetch", uid, "(BODY.PEEK[])"), "fetch")
        imap_ok(answer.result, answer.lines, "fetch")
        body = next((line for line in answer.lines if isinstance(line, bytearray)), None)
        if body is None:
            raise ChannelError(f"IMAP fetch of UID {uid} brought no message")
        return bytes(body)

    async def mark_seen(self, uid: str) -> None:
        """Set \\Seen: the mail is handled (its turn journaled, or it is never to be answered)."""
        answer = await self._command(lambda client: client.uid("store", uid, "+FLAGS", "(\\Seen)"), "store")
        imap_ok(answer.result, answer.lines, "store")

    async def wait_for_mail(self) -> None:
        """Return when new mail may have arrived since the last search: at once if it did while that mail was taken,
        else on an IDLE push (renewed every 29 minutes), or after a poll interval."""
        if not self.idles:
            await self._poll(self._config.poll_interval)
            # A SEARCH runs on the folder as the session last saw it; NOOP brings in what arrived since.
            answer = await self._command(lambda client: client.noop(), "noop")
            imap_ok(answer.result, answer.lines, "noop")
            return
        # The server reports new mail once, as `* N EXISTS` in the answer to whatever command is running then, and
        # aioimaplib drops it outside IDLE: IDLE would then wait for the next mail. A fresh SELECT says it moved.
        if await self._select():
            return
        idle = await self._command(lambda client: client.idle_start(timeout=IDLE_RENEW), "idle")
        try:
            await self._command(lambda client: client.wait_server_push(timeout=IDLE_RENEW + 5), "idle")
        except ChannelUnavailable as exc:
            if self._lost.is_set():
                raise
            logger.debug("email: IDLE ended without news (%s); renewing", exc)
        self._client.idle_done()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(idle, IMAP_TIMEOUT)

    async def _command(self, call: Callable[[Any], Awaitable[Any]], what: str) -> Any:
        """`call(client)`, one IMAP exchange, given up at once when the connection drops (aioimaplib would wait for its
        timeout); ChannelUnavailable when there is no connection (a reconnect failed)."""
        if self._client is None:
            raise ChannelUnavailable(f"IMAP {what}: not connected")
        command, dropped = asyncio.ensure_future(call(self._client)), asyncio.ensure_future(self._lost.wait())
        try:
            await asyncio.wait((command, dropped), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            command.cancel()
            raise
        finally:
            dropped.cancel()
        if not command.done():
            command.cancel()
            raise ChannelUnavailable(f"IMAP {what}: connection lost")
        return await call_imap(command, what)

    async def close(self) -> None:
        """Drop the connection; no LOGOUT, which would wait behind a command a stop interrupted."""
        client, self._client = self._client, None
        transport = getattr(getattr(client, "protocol", None), "transport", None)
        if transport is not None:
            transport.close()
