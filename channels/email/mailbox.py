"""One IMAP connection to the configured folder: unseen mail, its bytes, the \\Seen flag, waiting for more."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.config.schema_apps import ImapConfig
from bot.errors import ChannelError, ChannelUnavailable
from channels.email.calls import call_imap, imap_ok

logger = logging.getLogger(__name__)

IMAP_TIMEOUT = 30.0
IDLE_RENEW = 29 * 60.0  # RFC 2177: servers may drop a client idle for 30 minutes


class Mailbox:
    """The folder over IMAP: IDLE where the server offers it, else a wait of `poll_interval` between searches."""

    def __init__(self, config: ImapConfig, poll: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._config = config
        self._poll = poll
        self._client: Any = None
        self._lost = asyncio.Event()
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
            selected = await call_imap(client.select(config.folder), f"select {config.folder}")
            imap_ok(selected.result, selected.lines, f"select {config.folder}")
        except BaseException:
            await self.close()
            raise
        self.idles = client.has_capability("IDLE")

    async def unseen(self) -> list[str]:
        """The UIDs of the folder's unseen mail, oldest first."""
        answer = await self._command(self._client.uid_search("UNSEEN"), "search")
        imap_ok(answer.result, answer.lines, "search")
        return bytes(answer.lines[0]).decode().split() if answer.lines else []

    async def fetch(self, uid: str) -> bytes:
        """The whole mail, read without setting \\Seen (BODY.PEEK)."""
        answer = await self._command(self._client.uid("fetch", uid, "(BODY.PEEK[])"), "fetch")
        imap_ok(answer.result, answer.lines, "fetch")
        body = next((line for line in answer.lines if isinstance(line, bytearray)), None)
        if body is None:
            raise ChannelError(f"IMAP fetch of UID {uid} brought no message")
        return bytes(body)

    async def mark_seen(self, uid: str) -> None:
        """Set \\Seen: the mail is handled (its turn journaled, or it is never to be answered)."""
        answer = await self._command(self._client.uid("store", uid, "+FLAGS", "(\\Seen)"), "store")
        imap_ok(answer.result, answer.lines, "store")

    async def wait_for_mail(self) -> None:
        """Return when new mail may have arrived: an IDLE push (renewed every 29 minutes), or after a poll interval."""
        if not self.idles:
            await self._poll(self._config.poll_interval)
            # A SEARCH runs on the folder as the session last saw it; NOOP brings in what arrived since.
            answer = await self._command(self._client.noop(), "noop")
            imap_ok(answer.result, answer.lines, "noop")
            return
        client = self._client
        idle = await self._command(client.idle_start(timeout=IDLE_RENEW), "idle")
        try:
            await self._command(client.wait_server_push(timeout=IDLE_RENEW + 5), "idle")
        except ChannelUnavailable as exc:
            if self._lost.is_set():
                raise
            logger.debug("email: IDLE ended without news (%s); renewing", exc)
        client.idle_done()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(idle, IMAP_TIMEOUT)

    async def _command(self, work: Awaitable[Any], what: str) -> Any:
        """One IMAP exchange, given up at once when the connection drops (aioimaplib would wait for its timeout)."""
        command, dropped = asyncio.ensure_future(work), asyncio.ensure_future(self._lost.wait())
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
