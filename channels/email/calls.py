"""SMTP and IMAP failures (aiosmtplib, aioimaplib, sockets) translated into relaybot's errors, in one place."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from bot.errors import ChannelError, ChannelUnavailable

T = TypeVar("T")


async def call_smtp(work: Awaitable[T]) -> T:
    """Run one SMTP exchange; 4xx answers and lost connections are transient, 5xx and refused logins are not."""
    import aiosmtplib

    try:
        return await work
    except aiosmtplib.SMTPAuthenticationError as exc:
        raise ChannelError(f"SMTP login refused ({exc.code} {exc.message})") from exc
    except aiosmtplib.SMTPRecipientsRefused as exc:
        raise ChannelError(f"recipient refused: {'; '.join(str(r) for r in exc.recipients)}") from exc
    except (aiosmtplib.SMTPConnectError, aiosmtplib.SMTPServerDisconnected, aiosmtplib.SMTPTimeoutError) as exc:
        raise ChannelUnavailable(f"SMTP: {type(exc).__name__}: {exc}") from exc
    except aiosmtplib.SMTPResponseException as exc:
        error = ChannelUnavailable if 400 <= exc.code < 500 else ChannelError
        raise error(f"SMTP {exc.code} {exc.message}") from exc
    except aiosmtplib.SMTPException as exc:
        raise ChannelError(f"SMTP: {exc}") from exc
    except OSError as exc:
        raise ChannelUnavailable(f"SMTP: {type(exc).__name__}: {exc}") from exc


async def call_imap(work: Awaitable[T], what: str) -> T:
    """Run one IMAP exchange; a dropped or refused connection and a timeout are transient."""
    from aioimaplib import Abort, CommandTimeout

    try:
        return await work
    except (Abort, CommandTimeout, TimeoutError, OSError) as exc:
        raise ChannelUnavailable(f"IMAP {what}: {type(exc).__name__}: {exc}") from exc


def imap_ok(result: str, lines: list[bytes] | list[bytearray], what: str) -> None:
    """Raise ChannelError unless the server answered OK (a refused login, a missing folder)."""
    if result != "OK":
        detail = b" ".join(bytes(line) for line in lines[-1:]).decode(errors="replace")
        raise ChannelError(f"IMAP {what} refused: {detail or result}")
