"""Microsoft Teams as the contract suite sees it: the fake Connector and issuer, the bot's webhook on loopback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.bus import ChatRef
from bot.config.channels.teams import TeamsConfig
from channels.base import Channel
from channels.teams.channel import TeamsChannel
from tests.fakes.teams_server import CHANNEL_CONVERSATION, TEAM, FakeTeams, connector_error
from tests.support.adapter import AdapterUnderTest, WebhookAdapter
from tests.support.platform import Platform

WEBHOOK_PATH = "/api/messages"
TEXT_LIMIT = 4000
CONSENT_CARD = "application/vnd.microsoft.teams.card.file.consent"
ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"


def teams_section(fake: FakeTeams, **section: Any) -> dict[str, Any]:
    """`channels.teams` pointing at `fake`, live replies off unless `section` says otherwise."""
    return {**fake.section(), "webhook_path": WEBHOOK_PATH, "streaming": "off", **section}


class Teams(Platform):
    """Personal chats and a team channel where only an @mention is answered; cards for choices; no reactions
    (a bot cannot react in Teams); files through the consent card."""

    name, limit, owner, stranger = "teams", TEXT_LIMIT, "29:owner-0042", "29:stranger-0077"
    forbidden = "The bot is not part of the conversation roster."
    reacts, files_in_groups = False, False
    gateway_sections = {"health": {"port": 0}}
    fake: FakeTeams

    @property
    def section(self) -> dict[str, Any]:
        return teams_section(self.fake)

    @property
    def server(self) -> str:
        return TEAM

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("teams", CHANNEL_CONVERSATION)

    def direct_chat(self, user: str) -> ChatRef:
        return ChatRef("teams", f"a:personal-{user}")

    def serving(self, gateway: Any) -> None:
        self.fake.webhook_url = f"http://127.0.0.1:{gateway.gateway.health_server.port}{WEBHOOK_PATH}"

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        config = TeamsConfig.model_validate({"enabled": True, **self.section, **section})
        return WebhookAdapter(lambda publish: TeamsChannel(publish, config, media_dir), self.fake, WEBHOOK_PATH)  # type: ignore[return-value]

    def dm(self, text: str, user: str) -> Any:
        return self.fake.personal(text, user)

    def group(self, text: str, user: str, mention: bool) -> Any:
        return self.fake.channel_message(text, user, mention)

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        return self.fake.personal_file(content, name, user)

    def redeliver(self, payload: Any) -> None:
        self.fake.push(payload)

    def sent(self) -> list[str]:
        return [_text_of(sent) for sent in self.fake.sent if not _is_file_card(sent)]

    async def wait_sent(self, n: int) -> None:
        await self.fake.wait_until(lambda: len(self.sent()) >= n, f"{n} sent")

    def sent_ids(self) -> list[str]:
        return [sent["_id"] for sent in self.fake.sent if not _is_file_card(sent)]

    def edits(self) -> list[tuple[str, str]]:
        return [(activity_id, str(activity.get("text") or "")) for activity_id, activity in self.fake.updates]

    def uploads(self) -> list[str]:
        return [name for name, _ in self.fake.uploads]

    def buttons(self, index: int) -> list[str]:
        sent = [s for s in self.fake.sent if not _is_file_card(s)][index]
        return [action["title"] for action in sent["attachments"][0]["content"]["actions"]]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        sent = [s for s in self.fake.sent if not _is_file_card(s)][index]
        self.fake.press(sent, label, user)

    def marks(self) -> list[str]:
        return []

    def limit_send(self, retry_after: float) -> None:
        self.fake.failures.append(connector_error(429, "TooManyRequests", "Too many requests", retry_after))

    def break_send(self) -> None:
        self.fake.failures.append(connector_error(503, "ServiceError", "Service unavailable"))

    def refuse_send(self) -> None:
        self.fake.failures.append(connector_error(403, "BotNotInConversationRoster", self.forbidden))

    def send_attempts(self) -> int:
        return self.fake.attempts

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.wait_until(check, what)


def _is_file_card(sent: dict[str, Any]) -> bool:
    """A consent card or the file card after it: the bot's upload, not a text message."""
    types = {attachment.get("contentType") for attachment in sent.get("attachments") or []}
    return bool(types) and ADAPTIVE_CARD not in types


def _text_of(sent: dict[str, Any]) -> str:
    if sent.get("text"):
        return str(sent["text"])
    for attachment in sent.get("attachments") or []:
        if attachment.get("contentType") == ADAPTIVE_CARD:
            return str(attachment["content"]["body"][0]["text"])
    return ""
