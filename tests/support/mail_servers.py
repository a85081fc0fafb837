"""Real mail servers for tests: Dovecot (IMAP) in a temp dir and aiosmtpd (SMTP) on 127.0.0.1, both on free ports."""

from __future__ import annotations

import asyncio
import getpass
import imaplib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.support.polling import until, until_blocking

BOT_ADDRESS = "bot@relay.test"
PASSWORD = "imap-pw"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class DovecotServer:
    """A running Dovecot; each `mailbox()` is a fresh, empty account on it, so tests share one server."""

    port: int
    process: subprocess.Popen[bytes]
    root: Path
    accounts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @classmethod
    def start(cls, extra: str = "") -> DovecotServer:
        """Start one in a fresh temp dir (`extra` appended to its config); skip when Dovecot is not installed."""
        binary = shutil.which("dovecot") or ("/usr/sbin/dovecot" if Path("/usr/sbin/dovecot").exists() else None)
        if binary is None:
            pytest.skip("dovecot is not installed (Debian: dovecot-imapd; .ci/run installs it)")
        root = Path(tempfile.mkdtemp(prefix="relaybot-dovecot-"))
        root.chmod(0o755)  # the mail processes run as another user
        for folder in ("run", "state", "mail"):
            (root / folder).mkdir()
            (root / folder).chmod(0o755)  # explicit modes: the process's umask may be 077 (relaybot's own)
        port = _free_port()
        (root / "dovecot.conf").write_text(_config(root, port) + extra)
        process = subprocess.Popen([binary, "-F", "-c", str(root / "dovecot.conf")], stderr=subprocess.PIPE)
        server = cls(port, process, root)
        try:
            server._wait_ready()
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_ready(self) -> None:
        try:
            until_blocking(self._greets, 10)
        except TimeoutError:
            error = self.process.stderr.read() if self.process.stderr else b""
            raise RuntimeError(f"dovecot did not start: {error!r}") from None

    def _greets(self) -> bool:
        """Whether Dovecot answers with its greeting; a process that has exited stops the wait at once."""
        if self.process.poll() is not None:
            raise TimeoutError("dovecot exited")
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                return sock.recv(100).startswith(b"* OK")
        except OSError:
            return False

    def mailbox(self) -> Dovecot:
        """A new account with an empty INBOX (every user name logs in with `PASSWORD`, its mail folder made at once)."""
        return Dovecot(self.port, f"bot-{next(self.accounts)}@relay.test")

    def stop(self) -> None:
        """Stop the server and remove its files."""
        self.process.terminate()
        self.process.wait(10)
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class Dovecot:
    """One account's mailbox on a running Dovecot; mail is put in its INBOX with `deliver`."""

    port: int
    user: str
    password: str = PASSWORD

    def _session(self) -> imaplib.IMAP4:
        client = imaplib.IMAP4("127.0.0.1", self.port)
        client.login(self.user, self.password)
        client.select("INBOX")
        return client

    def _append(self, raw: bytes) -> None:
        client = self._session()
        try:
            client.append("INBOX", "", imaplib.Time2Internaldate(time.time()), raw)
        finally:
            client.logout()

    async def deliver(self, mail: EmailMessage | bytes) -> None:
        """APPEND a mail to the INBOX, as a delivery would (it wakes IDLE)."""
        await asyncio.to_thread(self._append, mail if isinstance(mail, bytes) else mail.as_bytes())

    def _flags(self) -> list[str]:
        client = self._session()
        try:
            _, data = client.uid("FETCH", "1:*", "(FLAGS)")
        finally:
            client.logout()
        return [item.decode() for item in data if isinstance(item, bytes)]

    async def flags(self) -> list[str]:
        """Each mail's FETCH line with its UID and flags, e.g. `1 (UID 1 FLAGS (\\Seen))`."""
        return await asyncio.to_thread(self._flags)

    async def seen_count(self) -> int:
        """How many mails carry \\Seen."""
        return sum("\\Seen" in line for line in await self.flags())

    async def wait_seen(self, count: int, timeout: float = 10.0) -> None:
        """Return once `count` mails carry \\Seen (the flag is set after the publish, on the bot's own schedule)."""

        async def all_seen() -> bool:
            return await self.seen_count() >= count

        try:
            await until(all_seen, timeout, interval=0.05)  # a server we cannot subscribe to
        except TimeoutError:
            raise TimeoutError(f"after {timeout}s only {await self.seen_count()} of {count} mails seen") from None


def _config(root: Path, port: int) -> str:
    if os.getuid() == 0:  # as root, mail processes run as the userdb's user: nobody owns the mail
        nobody = pwd.getpwnam("nobody")
        userdb = f"uid={nobody.pw_uid} gid={nobody.pw_gid}"
        internal = ""
        os.chown(root / "mail", nobody.pw_uid, nobody.pw_gid)
    else:  # unprivileged: every process runs as us
        me = getpass.getuser()
        userdb = f"uid={os.getuid()} gid={os.getgid()}"
        internal = f"default_internal_user = {me}\ndefault_internal_group = {me}\ndefault_login_user = {me}\n"
    return f"""{internal}base_dir = {root}/run
state_dir = {root}/state
instance_name = relaybot-test-{port}
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_failure_delay = 0
protocols = imap
log_path = {root}/dovecot.log
mail_location = maildir:{root}/mail/%n
passdb {{
  driver = static
  args = password={PASSWORD}
}}
userdb {{
  driver = static
  args = {userdb} home={root}/mail/%n
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
"""


@pytest.fixture(scope="session")
def dovecot_server() -> Iterator[DovecotServer]:
    """One Dovecot IMAP server for the whole run (stopping one takes a second)."""
    server = DovecotServer.start()
    yield server
    server.stop()


@pytest.fixture
def dovecot(dovecot_server: DovecotServer) -> Dovecot:
    """A fresh, empty mailbox for one test."""
    return dovecot_server.mailbox()


@pytest.fixture(scope="session")
def plain_dovecot_server() -> Iterator[DovecotServer]:
    """A second Dovecot, without IDLE. Tests of refused logins use it: after one, Dovecot makes every login from
    127.0.0.1 wait seconds (its auth penalty), which must not slow the other tests."""
    server = DovecotServer.start("imap_capability = IMAP4rev1 LITERAL+ UIDPLUS\n")
    yield server
    server.stop()


class SmtpSink:
    """aiosmtpd on this event loop: accepts mail (with LOGIN/PLAIN auth when `user` is set) and keeps it."""

    def __init__(self, user: str | None = None, password: str | None = None) -> None:
        self.user, self.password = user, password
        self.received: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.failures: deque[str] = deque()  # answers to the next DATA commands instead of 250, e.g. "451 4.3.0 …"
        self.attempts = 0  # DATA commands, refused or not
        self._arrived = asyncio.Condition()
        self._server: asyncio.AbstractServer | None = None
        self.port = 0

    async def __aenter__(self) -> SmtpSink:
        from aiosmtpd.smtp import SMTP

        loop = asyncio.get_running_loop()
        options: dict[str, Any] = {"hostname": "sink.relay.test", "auth_require_tls": False}
        if self.user:
            options["authenticator"] = self._authenticate
        self._server = await loop.create_server(lambda: SMTP(self, **options), "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def _authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> Any:
        from aiosmtpd.smtp import AuthResult, LoginPassword

        ok = isinstance(auth_data, LoginPassword) and (auth_data.login.decode(), auth_data.password.decode()) == (
            self.user,
            self.password,
        )
        return AuthResult(success=ok, handled=False)  # False: the server itself answers 535 on a refusal

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        """aiosmtpd's hook: keep the mail, wake the waiters."""
        mail = message_from_bytes(envelope.content, policy=policy.default)
        async with self._arrived:
            self.attempts += 1
            self._arrived.notify_all()
            if self.failures:
                return self.failures.popleft()
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            self.received.append(mail)  # type: ignore[arg-type]
            self._arrived.notify_all()
        return "250 Message accepted"

    async def wait_for(self, count: int, timeout: float = 15.0) -> list[EmailMessage]:
        """Wait until `count` mails arrived; return them all."""
        await self.wait_until(lambda: len(self.received) >= count, f"{count} mails", timeout)
        return self.received

    async def wait_until(self, check: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
        """Wait until `check()` holds, re-checked whenever a mail is offered."""
        try:
            async with asyncio.timeout(timeout), self._arrived:
                await self._arrived.wait_for(check)
        except TimeoutError:
            raise TimeoutError(f"after {timeout}s not yet {what} ({len(self.received)} mails)") from None


@pytest_asyncio.fixture
async def smtp_sink() -> AsyncIterator[SmtpSink]:
    """A started SMTP server that keeps what it receives."""
    async with SmtpSink(BOT_ADDRESS, "smtp-pw") as sink:
        yield sink


def text_of(mail: EmailMessage) -> str:
    """A mail's plain-text body as its reader sees it."""
    body = mail.get_body(("plain",))
    return str(body.get_content()).replace("\r\n", "\n").strip() if body is not None else ""


class MailPlatform:
    """A mailbox on Dovecot and an SMTP sink together: users write with `push` (in order); the bot's mail lands in
    `sink`."""

    fixtures = ("dovecot_server",)
    """What the contract suite hands the constructor: the shared Dovecot."""

    def __init__(self, server: DovecotServer) -> None:
        self.sink = SmtpSink(BOT_ADDRESS, "smtp-pw")
        self.server = server
        self.dovecot: Dovecot | None = None
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._pusher: asyncio.Task[None] | None = None

    async def __aenter__(self) -> MailPlatform:
        self.dovecot = self.server.mailbox()
        await self.sink.__aenter__()
        self._pusher = asyncio.create_task(self._push_in_order())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._pusher is not None:
            self._pusher.cancel()
            await asyncio.gather(self._pusher, return_exceptions=True)
        await self.sink.__aexit__()

    def section(self) -> dict[str, Any]:
        """The `channels.email` section for these servers."""
        assert self.dovecot is not None
        imap = {"host": "127.0.0.1", "port": self.dovecot.port, "user": self.dovecot.user, "password": PASSWORD}
        imap["tls"] = False
        smtp = {"host": "127.0.0.1", "port": self.sink.port, "user": BOT_ADDRESS, "password": "smtp-pw", "tls": "off"}
        return {"imap": imap, "smtp": {**smtp, "from": BOT_ADDRESS}}

    def push(self, text: str, sender: str, subject: str = "Hello") -> bytes:
        """A new mail from `sender`, queued for delivery; returns its bytes (to deliver again)."""
        return self.push_mail(self.new_mail(text, sender, subject))

    def new_mail(self, text: str, sender: str, subject: str = "Hello") -> EmailMessage:
        """A mail from `sender` to the bot, not yet sent."""
        mail = EmailMessage()
        mail["From"], mail["To"], mail["Subject"] = sender, BOT_ADDRESS, subject
        mail["Message-ID"] = make_msgid(domain="example.org")
        mail.set_content(text)
        return mail

    def push_mail(self, mail: EmailMessage) -> bytes:
        """Queue `mail` for delivery; returns its bytes."""
        raw = mail.as_bytes()
        self.redeliver(raw)
        return raw

    def reply_to(self, sent: EmailMessage, text: str, sender: str) -> bytes:
        """`sender` answers the bot's mail `sent` in its thread (Re: subject, In-Reply-To, References), queued."""
        mail = self.new_mail(text, sender, f"Re: {sent['Subject']}")
        mail["In-Reply-To"] = sent["Message-ID"]
        mail["References"] = " ".join(filter(None, [sent.get("References"), sent["Message-ID"]]))
        return self.push_mail(mail)

    def redeliver(self, raw: bytes) -> None:
        """Queue the same mail again (a second copy in the INBOX)."""
        self._queue.put_nowait(raw)

    def texts(self) -> list[str]:
        """The text of each mail the bot sent, in order."""
        return [text_of(mail) for mail in self.sink.received]

    async def _push_in_order(self) -> None:
        assert self.dovecot is not None
        while True:
            await self.dovecot.deliver(await self._queue.get())
