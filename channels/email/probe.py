"""`relaybot doctor` for email: IMAP login and select, SMTP EHLO and login, with channels.email's credentials."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check

if TYPE_CHECKING:
    from bot.config.channels.email import EmailConfig, ImapConfig, SmtpConfig

IMAP = "channels.email.imap"
SMTP = "channels.email.smtp"


async def check_email(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """One line for reading mail (IMAP), one for sending it (SMTP); each failure names the key to fix."""
    mail = cast("EmailConfig", section)
    return list(await asyncio.gather(_imap(mail.imap, timeout), _smtp(mail.smtp, timeout)))


async def _imap(config: ImapConfig, timeout: float) -> Check:
    from aioimaplib import IMAP4, IMAP4_SSL

    label = "email imap"
    if not config.host or not config.user:
        return Check(label, "fail", f"{IMAP}.host or .user is empty", f"set {IMAP}.host and {IMAP}.user")
    where = f"{config.host}:{config.port}"
    client = (IMAP4_SSL if config.tls else IMAP4)(host=config.host, port=config.port, timeout=timeout)
    try:
        async with asyncio.timeout(timeout):
            await client.wait_hello_from_server()
            login = await client.login(config.user, config.password.get_secret_value())
            if login.result != "OK":
                return Check(label, "fail", f"{where} refused the login of {config.user}", f"check {IMAP}.password")
            selected = await client.select(config.folder)
            if selected.result != "OK":
                fix = f"set {IMAP}.folder to a folder that exists"
                return Check(label, "fail", f"{where} has no folder {config.folder!r}", fix)
            await client.logout()
    except (OSError, TimeoutError) as exc:
        fix = f"check {IMAP}.host, {IMAP}.port and {IMAP}.tls"
        return Check(label, "fail", f"cannot reach {where} ({type(exc).__name__})", fix)
    finally:
        transport = getattr(client.protocol, "transport", None)
        if transport is not None:
            transport.close()
    return Check(label, "ok", f"{config.user} reads {config.folder} on {where}")


async def _smtp(config: SmtpConfig, timeout: float) -> Check:
    import aiosmtplib

    label = "email smtp"
    if not config.host or not config.sender:
        return Check(label, "fail", f"{SMTP}.host or .from is empty", f"set {SMTP}.host and {SMTP}.from")
    where = f"{config.host}:{config.port}"
    client = aiosmtplib.SMTP(
        hostname=config.host,
        port=config.port,
        use_tls=config.tls == "implicit",
        start_tls=config.tls == "starttls",
        timeout=timeout,
    )
    try:
        await client.connect()
        await client.ehlo()
        if config.user:
            await client.login(config.user, config.password.get_secret_value())
        await client.quit()
    except aiosmtplib.SMTPAuthenticationError as exc:
        return Check(
            label, "fail", f"{where} refused the login of {config.user} ({exc.code})", f"check {SMTP}.password"
        )
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        fix = f"check {SMTP}.host, {SMTP}.port and {SMTP}.tls"
        return Check(label, "fail", f"cannot talk to {where} ({type(exc).__name__})", fix)
    finally:
        client.close()
    return Check(label, "ok", f"{where} accepts mail from {config.sender}" + (" after login" if config.user else ""))
