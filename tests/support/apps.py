"""The faces of the apps reached by webhook or mail server, WhatsApp and email, and their adapters under test."""

from __future__ import annotations

import re
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from bot.bus import ChatRef
from bot.config.channels.email import EmailConfig
from bot.config.channels.whatsapp import WhatsAppConfig
from channels.base import Channel, Publish
from channels.email.channel import EmailChannel
from channels.whatsapp.channel import WhatsAppChannel
from tests.fakes.whatsapp_server import TEXT_LIMIT as WHATSAPP_LIMIT
from tests.fakes.whatsapp_server import FakeWhatsApp, graph_error
from tests.support.adapter import AdapterUnderTest, WebhookAdapter
from tests.support.mail_servers import MailPlatform, text_of
from tests.support.platform import Platform

WEBHOOK_PATH = "/whatsapp/webhook"
_NUMBERED = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


def whatsapp_section(fake: FakeWhatsApp) -> dict[str, Any]:
    """The `channels.whatsapp` keys that point the channel at `fake`."""
    return {
        "phone_number_id": fake.phone_number_id,
        "access_token": fake.token,
        "app_secret": fake.app_secret,
        "verify_token": "verify-me",
        "api_base": fake.api_base,
        "webhook_path": WEBHOOK_PATH,
    }


class WhatsApp(Platform):
    """Every chat is one person's (the Cloud API has no groups); no edits; a throttle names no wait."""

    name, limit, owner, stranger = "whatsapp", WHATSAPP_LIMIT, "4915100000042", "4915100000077"
    forbidden = "Message Undeliverable"
    names_its_wait, has_groups, can_edit = False, False, False
    gateway_sections = {"health": {"port": 0}}
    fake: FakeWhatsApp

    @property
    def section(self) -> dict[str, Any]:
        return whatsapp_section(self.fake)

    @property
    def server(self) -> str:
        raise NotImplementedError("WhatsApp has no servers or groups")

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("whatsapp", self.owner)

    def serving(self, gateway: Any) -> None:
        self.fake.webhook_url = f"http://127.0.0.1:{gateway.gateway.health_server.port}{WEBHOOK_PATH}"

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        config = WhatsAppConfig.model_validate({"enabled": True, **self.section, **section})

        def make(publish: Publish) -> WhatsAppChannel:
            return WhatsAppChannel(publish, config, media_dir)

        return WebhookAdapter(make, self.fake, WEBHOOK_PATH)  # type: ignore[return-value]

    def dm(self, text: str, user: str) -> Any:
        return self.fake.push_text(text, sender=user)

    def group(self, text: str, user: str, mention: bool) -> Any:
        raise NotImplementedError("WhatsApp has no groups")

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        return self.fake.document(content, name, mime_type, sender=user)

    def redeliver(self, payload: Any) -> None:
        self.fake.push(self.fake.message_payload(payload))

    def sent(self) -> list[str]:
        return [_whatsapp_text(sent) for sent in self.fake.sent]

    async def wait_sent(self, n: int) -> None:
        await self.fake.wait_for_sent(n)

    def sent_ids(self) -> list[str]:
        return [sent["_id"] for sent in self.fake.sent]

    def edits(self) -> list[tuple[str, str]]:
        return []

    def uploads(self) -> list[str]:
        kinds = ("document", "image", "audio", "video")
        return [self.fake.uploads[s[s["type"]]["id"]][2] for s in self.fake.sent if s["type"] in kinds]

    def buttons(self, index: int) -> list[str]:
        interactive = self.fake.sent[index]["interactive"]
        if interactive["type"] == "button":
            return [button["reply"]["title"] for button in interactive["action"]["buttons"]]
        return [row["title"] for section in interactive["action"]["sections"] for row in section["rows"]]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        sent = self.fake.sent[index]
        tap = self.fake.tap(sent, self.buttons(index).index(label), sender=user)
        self.fake.push(self.fake.message_payload(tap))

    def marks(self) -> list[str]:
        latest = dict(self.fake.reactions)
        return [emoji for emoji in latest.values() if emoji]

    def limit_send(self, retry_after: float) -> None:
        message = "(#131056) (Business Account, Consumer Account) pair rate limit hit"
        self.fake.failures.append(graph_error(400, 131056, message))

    def break_send(self) -> None:
        self.fake.failures.append(graph_error(500, 131000, "Something went wrong"))

    def refuse_send(self) -> None:
        self.fake.failures.append(graph_error(400, 131026, self.forbidden))

    def send_attempts(self) -> int:
        return self.fake.attempts

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.wait_until(check, what)


def _whatsapp_text(sent: dict[str, Any]) -> str:
    kind = sent["type"]
    if kind == "text":
        return str(sent["text"]["body"])
    if kind == "interactive":
        return str(sent["interactive"]["body"]["text"])
    if kind == "template":
        return f"[template {sent['template']['name']}]"
    return str(sent[kind].get("caption") or "")


class Email(Platform):
    """Mail over real Dovecot and aiosmtpd: every thread is one person's, one mail holds any reply, no edits, no
    reactions, choices as numbered lines answered by a reply, and an SMTP 4xx names no wait."""

    name, limit, owner, stranger = "email", None, "owner@example.org", "stranger@example.org"
    forbidden = "Relay access denied"
    names_its_wait, has_groups, can_edit, reacts = False, False, False, False
    fake: MailPlatform

    @property
    def section(self) -> dict[str, Any]:
        return self.fake.section()

    @property
    def server(self) -> str:
        raise NotImplementedError("email has no servers or groups")

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("email", self.owner)

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        config = EmailConfig.model_validate({"enabled": True, **self.section, **section})
        return AdapterUnderTest(lambda publish: EmailChannel(publish, config, media_dir, media_dir.parent / "email"))

    def dm(self, text: str, user: str) -> Any:
        return self.fake.push(text, user)

    def group(self, text: str, user: str, mention: bool) -> Any:
        raise NotImplementedError("email has no groups")

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        mail = self.fake.new_mail("", user, subject=name)
        maintype, _, subtype = mime_type.partition("/")
        mail.add_attachment(content, maintype=maintype, subtype=subtype, filename=name)
        return self.fake.push_mail(mail)

    def redeliver(self, payload: Any) -> None:
        self.fake.redeliver(payload)

    def sent(self) -> list[str]:
        return self.fake.texts()

    async def wait_sent(self, n: int) -> None:
        await self.fake.sink.wait_for(n)

    def sent_ids(self) -> list[str]:
        return [str(mail["Message-ID"]) for mail in self.fake.sink.received]

    def edits(self) -> list[tuple[str, str]]:
        return []

    def uploads(self) -> list[str]:
        mails: list[EmailMessage] = self.fake.sink.received
        return [str(part.get_filename()) for mail in mails for part in mail.iter_attachments()]

    def buttons(self, index: int) -> list[str]:
        return [label for _, label in _NUMBERED.findall(text_of(self.fake.sink.received[index]))]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        number = self.buttons(index).index(label) + 1
        self.fake.reply_to(self.fake.sink.received[index], f"{number}\n\n> the earlier mail", user)

    def marks(self) -> list[str]:
        return []

    def limit_send(self, retry_after: float) -> None:
        self.fake.sink.failures.append("421 4.7.0 Too many messages, slow down")

    def break_send(self) -> None:
        self.fake.sink.failures.append("451 4.3.0 Temporary local problem")

    def refuse_send(self) -> None:
        self.fake.sink.failures.append(f"554 5.7.1 {self.forbidden}")

    def send_attempts(self) -> int:
        return self.fake.sink.attempts

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.sink.wait_until(check, what)
