"""XMPP as the contract suite sees it: real people on a real Prosody, the bot's messages seen by the front it
connects through. Corrections (XEP-0308) are its edits and HTTP upload (XEP-0363) its files; it has no reactions
the bot uses, a bounce of type `wait` names no wait, and one message holds any reply. A file a user sends is a link
to the server's HTTP upload, which the bot downloads."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import slixmpp

from bot.bus import ChatRef
from bot.config.channels.xmpp import XmppConfig
from channels.base import Channel
from channels.xmpp.channel import XmppChannel
from tests.fakes.xmpp_front import SentMessage
from tests.support.adapter import AdapterUnderTest
from tests.support.platform import Platform
from tests.support.prosody import DOMAIN, ROOMS
from tests.support.xmpp_users import XmppUser
from tests.support.xmpp_world import ROOM, XmppWorld

_NUMBERED = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


class Xmpp(Platform):
    """Messages on Prosody: the owner and the stranger are accounts on it, the group is a MUC room."""

    name, limit, owner, stranger = "xmpp", None, f"owner@{DOMAIN}", f"stranger@{DOMAIN}"
    forbidden = "You are not allowed to send messages here"
    stream_chunk_delay = 0.05
    names_its_wait, reacts = False, False
    fake: XmppWorld

    def __init__(self, fake: Any) -> None:
        super().__init__(fake)
        self._offers: set[asyncio.Task[None]] = set()

    @property
    def section(self) -> dict[str, Any]:
        return self.fake.section()

    @property
    def server(self) -> str:
        return ROOMS

    @property
    def group_chat(self) -> ChatRef:
        return ChatRef("xmpp", ROOM)

    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        config = XmppConfig.model_validate({"enabled": True, **self.fake.section(**section)})
        return AdapterUnderTest(lambda publish: XmppChannel(publish, config, media_dir=media_dir))  # type: ignore[return-value]

    def _user(self, user: str) -> XmppUser:
        person = self.fake.owner if user == self.owner else self.fake.stranger
        assert person is not None
        return person

    def dm(self, text: str, user: str) -> Any:
        return user, self._user(user).say(self.fake.bot, text), text

    def group(self, text: str, user: str, mention: bool) -> Any:
        return self._user(user).say(ROOM, f"bot: {text}" if mention else text, "groupchat")

    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        """The user's client puts the file on the server's HTTP upload and sends its link (XEP-0363 §5 and
        XEP-0066), as XMPP clients send files."""
        offer = asyncio.create_task(self._offer(content, name, mime_type, self._user(user)))
        self._offers.add(offer)
        offer.add_done_callback(self._offers.discard)

    async def _offer(self, content: bytes, name: str, mime_type: str, person: XmppUser) -> None:
        url = await person.upload(content, name, mime_type)
        msg = person.make_message(mto=slixmpp.JID(self.fake.bot), mbody=url, mtype="chat")
        msg["oob"]["url"] = url
        msg.send()

    def redeliver(self, payload: Any) -> None:
        """The same stanza again, same id: what a stream-management resumption (XEP-0198 §5) resends."""
        user, message_id, text = payload
        msg = self._user(user).make_message(mto=self.fake.bot, mbody=text, mtype="chat")
        msg["id"] = message_id
        msg.send()

    def _created(self) -> list[SentMessage]:
        return [message for message in self.fake.front.passed() if not message.replaces]

    def sent(self) -> list[str]:
        return [message.body for message in self._created()]

    async def wait_sent(self, n: int) -> None:
        await self.wait_for(lambda: len(self._created()) >= n, f"{n} messages sent")

    def sent_ids(self) -> list[str]:
        return [message.message_id for message in self._created()]

    def edits(self) -> list[tuple[str, str]]:
        return [(message.replaces, message.body) for message in self.fake.front.passed() if message.replaces]

    def uploads(self) -> list[str]:
        return [message.oob_url.rsplit("/", 1)[-1] for message in self._created() if message.oob_url]

    def buttons(self, index: int) -> list[str]:
        return [label for _, label in _NUMBERED.findall(self.sent()[index])]

    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        shown = self._created()[index]
        number = str(self.buttons(index).index(label) + 1)
        if shown.kind == "groupchat":
            self._user(user).say(ROOM, number, "groupchat")
        else:
            self._user(user).say(self.fake.bot, number)

    def marks(self) -> list[str]:
        return []

    def limit_send(self, retry_after: float) -> None:
        self.fake.front.bounce_next("wait", "resource-constraint", "Too many messages, slow down")

    def break_send(self) -> None:
        self.fake.front.bounce_next("wait", "remote-server-timeout", "The recipient's server did not answer")

    def refuse_send(self) -> None:
        self.fake.front.bounce_next("auth", "forbidden", self.forbidden)

    def send_attempts(self) -> int:
        return len([message for message in self.fake.front.messages if not message.replaces])

    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        await self.fake.front.wait_until(check, what)
