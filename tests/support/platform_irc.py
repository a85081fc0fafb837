"""IRC as the contract suite sees it: real people on a real ngircd, the bot's lines seen by the front it connects
through. A message is a line; IRC has no edits, no reactions, no files and no redelivery, and a "too fast" numeric
names its wait (439), which the front answers with."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.bus import ChatRef
from channels.base import Channel
from channels.irc.channel import IrcChannel
from channels.irc.lines import MESSAGE_BYTES
from tests.support.adapter import AdapterUnderTest
from tests.support.irc_world import BOT_NICK, OWNER, STRANGER, IrcWorld
from tests.support.ngircd import ROOM
from tests.support.platform import Platform

_NUMBERED = re.compile(r"^(\d+)\. (.+)$")


class Irc(Platform):
    """Lines on ngircd: at most 512 bytes each as relayed, prefix and CRLF included."""

    name, limit, owner, stranger = "irc", MESSAGE_BYTES, OWNER, STRANGER
    forbidden = "No such nick or channel name"
    can_edit, reacts, carries_files = False, False, False
    fake: IrcWorld

    @property
    def section(self) -> dict[str, Any]:
        return {**self.fake.section(), "streaming": "off"}

    @property
    def server(self) -> str:
        return "127.0.0.1"

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("irc", ROOM)

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        config = self.fake.config(**section)
        return AdapterUnderTest(lambda publish: IrcChannel(publish, config))  # type: ignore[return-value]

    def dm(self, text: str, user: str) -> Any:
        self.fake.say(user, BOT_NICK, text)
        return text

    def group(self, text: str, user: str, mention: bool) -> Any:
        self.fake.say(user, ROOM, f"{BOT_NICK}: {text}" if mention else text)

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        """The user's client offers the file over DCC (a CTCP inside a PRIVMSG), as IRC clients send files."""
        self.fake.say(user, BOT_NICK, f"\x01DCC SEND {name} 2130706433 5000 {len(content)}\x01")

    def redeliver(self, payload: Any) -> None:
        """IRC never delivers a line twice: a server relays each PRIVMSG once and replays nothing on reconnect."""

    def sent(self) -> list[str]:
        return [message.text for message in self.fake.front.passed()]

    async def wait_sent(self, n: int) -> None:
        await self.wait_for(lambda: len(self.fake.front.passed()) >= n, f"{n} lines sent")

    def sent_ids(self) -> list[str]:
        return [str(index) for index, _ in enumerate(self.fake.front.passed())]

    def edits(self) -> list[tuple[str, str]]:
        return []

    def uploads(self) -> list[str]:
        return []

    def buttons(self, index: int) -> list[str]:
        labels = []
        for text in self.sent()[index + 1 :]:
            numbered = _NUMBERED.match(text)
            if numbered is None:
                break
            labels.append(numbered.group(2))
        return labels

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        target = self.fake.front.passed()[index].target
        self.fake.say(user, target if target.startswith("#") else BOT_NICK, str(self.buttons(index).index(label) + 1))

    def marks(self) -> list[str]:
        return []

    def limit_send(self, retry_after: float) -> None:
        self.fake.front.answer_next("439", f"Target change too fast. Please wait {retry_after:.0f} seconds.")

    def break_send(self) -> None:
        self.fake.front.answer_next("263", "Please wait a while and try again.", about_target=False)

    def refuse_send(self) -> None:
        self.fake.front.answer_next("401", self.forbidden)

    def send_attempts(self) -> int:
        return len(self.fake.front.privmsgs)

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.front.wait_until(check, what)

    def visible(self, text: str) -> str:
        """The line as the server relays it: the bot's prefix, the command and target, the text and CRLF."""
        relayed = [
            line.raw.decode() for user in self.fake.users.values() for line in user.received if line.text == text
        ]
        return relayed[0] if relayed else text
