"""The faces of the three fake chat platforms, and which fake server each one fronts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.bus import ChatRef
from channels.base import Channel
from tests.fakes.discord_server import TEXT_LIMIT as DISCORD_LIMIT
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.mattermost_server import FakeMattermost
from tests.fakes.signal_daemon import FakeSignalDaemon
from tests.fakes.slack_server import FakeSlack
from tests.fakes.teams_server import FakeTeams
from tests.fakes.telegram_html import html_visible_text
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.whatsapp_server import FakeWhatsApp
from tests.support.adapter import AdapterUnderTest, discord_adapter, slack_adapter, telegram_adapter
from tests.support.apps import Email, WhatsApp
from tests.support.irc_world import IrcWorld
from tests.support.mail_servers import MailPlatform
from tests.support.matrix_world import MatrixWorld
from tests.support.platform import Platform
from tests.support.platform_irc import Irc
from tests.support.platform_matrix import Matrix
from tests.support.platform_teams import Teams
from tests.support.platform_xmpp import Xmpp
from tests.support.selfhosted import Mattermost, Signal
from tests.support.xmpp_world import XmppWorld


class Telegram(Platform):
    name, limit, owner, stranger = "telegram", 4096, "42", "77"
    forbidden = "Forbidden: bot was kicked from the supergroup chat"
    fake: FakeTelegram
    GROUP = -100

    @property
    def section(self) -> dict[str, Any]:
        return {"token": self.fake.token, "api_base": self.fake.base_url, "streaming": "off"}

    @property
    def server(self) -> str:
        return str(self.GROUP)

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("telegram", str(self.GROUP))

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        return telegram_adapter(self.fake, media_dir, **section)  # type: ignore[return-value]

    def dm(self, text: str, user: str) -> Any:
        return self.fake.text(text, chat_id=int(user), user_id=int(user))

    def group(self, text: str, user: str, mention: bool) -> Any:
        text = f"@{self.fake.bot_username} {text}" if mention else text
        return self.fake.text(text, chat_id=self.GROUP, user_id=int(user), chat_type="supergroup")

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        return self.fake.document(content, file_name=name, mime_type=mime_type, chat_id=int(user), user_id=int(user))

    def redeliver(self, payload: Any) -> None:
        self.fake.push({"message": payload["message"]})

    def sent(self) -> list[str]:
        return [s.get("text") or s.get("caption") or "" for s in self.fake.sent]

    async def wait_sent(self, n: int) -> None:
        await self.fake.wait_for_sent(n)

    def sent_ids(self) -> list[str]:
        return [str(s["message_id"]) for s in self.fake.sent]

    def edits(self) -> list[tuple[str, str]]:
        return [(str(e["message_id"]), html_visible_text(e["text"])) for e in self.fake.edits]

    def uploads(self) -> list[str]:
        return [s["document"].filename for s in self.fake.sent if "document" in s]

    def buttons(self, index: int) -> list[str]:
        rows = self.fake.sent[index]["reply_markup"]["inline_keyboard"]
        return [button["text"] for row in rows for button in row]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        sent = self.fake.sent[index]
        shown = self.fake.message(sent["chat_id"], sent["message_id"])
        self.fake.press(shown, f"{prompt_id}:{choice_id}", user_id=int(user))

    def marks(self) -> list[str]:
        latest = {(r["chat_id"], r["message_id"]): r.get("reaction") or [] for r in self.fake.reactions}
        return [reaction["emoji"] for reactions in latest.values() for reaction in reactions]

    def limit_send(self, retry_after: float) -> None:
        self.fake.fail("sendMessage", status=429, retry_after=int(retry_after))

    def break_send(self) -> None:
        self.fake.fail("sendMessage", status=502, description="Bad Gateway")

    def refuse_send(self) -> None:
        self.fake.fail("sendMessage", status=403, description=self.forbidden)

    def send_attempts(self) -> int:
        return sum(1 for method, _ in self.fake.calls if method == "sendMessage")

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.wait_until(check, what)

    def visible(self, text: str) -> str:
        return html_visible_text(text)


class Discord(Platform):
    name, limit, owner, stranger = "discord", DISCORD_LIMIT, "42", "77"
    forbidden = "Missing Permissions"
    sdk_waits_out_rate_limits = True
    fake: FakeDiscord

    @property
    def section(self) -> dict[str, Any]:
        return {
            "token": self.fake.token,
            "api_base": self.fake.api_base,
            "gateway_url": self.fake.gateway_url,
            "streaming": "off",
        }

    @property
    def server(self) -> str:
        return str(self.fake.guild_id)

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("discord", str(self.fake.channel_id))

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        return discord_adapter(self.fake, media_dir, **section)  # type: ignore[return-value]

    def dm(self, text: str, user: str) -> Any:
        return self.fake.dm(text, user_id=int(user))

    def group(self, text: str, user: str, mention: bool) -> Any:
        return self.fake.guild_message(text, user_id=int(user), mention_bot=mention)

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        return self.fake.dm("", user_id=int(user), attachments=[self.fake.attachment(name, content, mime_type)])

    def redeliver(self, payload: Any) -> None:
        self.fake.redeliver(payload)

    def sent(self) -> list[str]:
        return [s["content"] for s in self.fake.sent]

    async def wait_sent(self, n: int) -> None:
        await self.fake.wait_for_sent(n)

    def sent_ids(self) -> list[str]:
        return [str(s["id"]) for s in self.fake.sent]

    def edits(self) -> list[tuple[str, str]]:
        return [(str(e["id"]), e["content"]) for e in self.fake.edits]

    def uploads(self) -> list[str]:
        return [u["filename"] for u in self.fake.uploads]

    def buttons(self, index: int) -> list[str]:
        rows = self.fake.sent[index]["components"]
        return [button["label"] for row in rows for button in row["components"]]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        self.fake.press(self.fake.sent[index], f"{prompt_id}:{choice_id}", user_id=int(user))

    def marks(self) -> list[str]:
        present: list[tuple[int, str]] = []
        for action, message_id, emoji in self.fake.reactions:
            if action == "add":
                present.append((message_id, emoji))
            else:
                present.remove((message_id, emoji))
        return [emoji for _, emoji in present]

    def limit_send(self, retry_after: float) -> None:
        self.fake.fail("send_message", status=429, retry_after=retry_after)

    def break_send(self) -> None:
        self.fake.fail("send_message", status=503)

    def refuse_send(self) -> None:
        self.fake.fail("send_message", status=403)

    def send_attempts(self) -> int:
        return sum(1 for verb, path in self.fake.calls if verb == "POST" and path.endswith("/messages"))

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.wait_until(check, what)


class Slack(Platform):
    name, limit, owner, stranger = "slack", 3900, "U0OWNER", "U0STRANGER"
    forbidden = "not_in_channel"
    fake: FakeSlack
    CHANNEL = "C0001"

    @property
    def section(self) -> dict[str, Any]:
        fake = self.fake
        return {"bot_token": fake.bot_token, "app_token": fake.app_token, "api_base": fake.base_url, "streaming": "off"}

    @property
    def server(self) -> str:
        return self.fake.team_id

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("slack", self.CHANNEL)

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        return slack_adapter(self.fake, media_dir, **section)  # type: ignore[return-value]

    def dm(self, text: str, user: str) -> Any:
        return self.fake.dm(text, user=user, channel=f"D{user}")

    def group(self, text: str, user: str, mention: bool) -> Any:
        return self.fake.channel_message(text, channel=self.CHANNEL, user=user, mention=mention)

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        return self.fake.file_share(content, name, mime_type, user=user, channel=f"D{user}")

    def redeliver(self, payload: Any) -> None:
        self.fake.redeliver(payload)

    def sent(self) -> list[str]:
        return [s["text"] for s in self.fake.posted]

    async def wait_sent(self, n: int) -> None:
        await self.fake.wait_for_posted(n)

    def sent_ids(self) -> list[str]:
        return [s["ts"] for s in self.fake.posted]

    def edits(self) -> list[tuple[str, str]]:
        return [(u["ts"], u["text"]) for u in self.fake.updates]

    def uploads(self) -> list[str]:
        return [u["title"] for u in self.fake.uploads]

    def buttons(self, index: int) -> list[str]:
        blocks = self.fake.posted[index]["blocks"]
        return [e["text"]["text"] for block in blocks if block["type"] == "actions" for e in block["elements"]]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        self.fake.press(self.fake.posted[index], label, user=user)

    def marks(self) -> list[str]:
        return [name for names in self.fake.reactions.values() for name in names]

    def limit_send(self, retry_after: float) -> None:
        self.fake.fail("chat.postMessage", status=429, retry_after=int(retry_after))

    def break_send(self) -> None:
        self.fake.fail("chat.postMessage", status=503)

    def refuse_send(self) -> None:
        self.fake.fail("chat.postMessage", status=200, error=self.forbidden)

    def send_attempts(self) -> int:
        return sum(1 for method, _ in self.fake.calls if method == "chat.postMessage")

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.wait_until(check, 10, lambda: what)


PLATFORMS: dict[str, tuple[type[Any], type[Platform]]] = {
    "telegram": (FakeTelegram, Telegram),
    "discord": (FakeDiscord, Discord),
    "slack": (FakeSlack, Slack),
    "matrix": (MatrixWorld, Matrix),
    "whatsapp": (FakeWhatsApp, WhatsApp),
    "email": (MailPlatform, Email),
    "mattermost": (FakeMattermost, Mattermost),
    "signal": (FakeSignalDaemon, Signal),
    "irc": (IrcWorld, Irc),
    "teams": (FakeTeams, Teams),
    "xmpp": (XmppWorld, Xmpp),
}
"""Each platform's fake server and its face, by channel name."""


def platforms_with(ability: str) -> list[str]:
    """The platforms whose face declares `ability` (a flag of `Platform`, e.g. `has_groups`), for a test about it."""
    return [name for name, (_, face) in sorted(PLATFORMS.items()) if getattr(face, ability)]
