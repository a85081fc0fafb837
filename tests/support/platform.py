"""Each fake platform behind one face, so the channel contract suite runs the same test on every platform.

A face knows who is who on its platform, how a user writes (a DM, a group message, a file), what the bot did
(texts sent, edits, uploads, buttons, reactions), and how to make the platform refuse or limit a send.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from bot.bus import ChatRef
from channels.base import Channel
from tests.support.adapter import AdapterUnderTest


class Platform(ABC):
    """One fake platform as the contract suite sees it."""

    name: ClassVar[str]
    limit: ClassVar[int | None]
    """The most text one message may carry, as the user sees it; None where one message holds any reply (email)."""
    owner: ClassVar[str]
    stranger: ClassVar[str]
    forbidden: ClassVar[str]
    """How the platform words the refusal `refuse_send` makes it answer."""
    stream_chunk_delay: ClassVar[float] = 0.02
    """Seconds between the model's streamed pieces: a real server (Synapse) needs them slower than a fake does."""
    sdk_waits_out_rate_limits: ClassVar[bool] = False
    """Whether the platform's own library sleeps through a 429 (then the bot's injected sleep never sees it)."""
    # What a platform does not offer is declared here, and the suite checks the declared fallback instead.
    names_its_wait: ClassVar[bool] = True
    """Whether a rate limit says how long to wait (else the bot backs off by its own policy)."""
    has_groups: ClassVar[bool] = True
    """Whether the platform has group chats, where only a mention gets an answer (else every chat is direct)."""
    can_edit: ClassVar[bool] = True
    """Whether the bot can edit a message it sent (else a live reply goes out whole, once)."""
    reacts: ClassVar[bool] = True
    """Whether the bot can put a reaction on a user's message (else the channel has no `react`)."""
    carries_files: ClassVar[bool] = True
    """Whether files travel in chats (else users cannot send one, and a file the bot sends becomes a notice naming
    it)."""
    files_in_groups: ClassVar[bool] = True
    """Whether the bot can send files in a group (else only in a direct chat, and a group gets a line naming them)."""
    gateway_sections: ClassVar[dict[str, Any]] = {}
    """Top-level config sections the gateway needs for this platform (a webhook needs `health.port`)."""

    def __init__(self, fake: Any) -> None:
        self.fake = fake

    @property
    @abstractmethod
    def section(self) -> dict[str, Any]:
        """The channel's config section pointing at the fake; replies go out whole (live replies off)."""

    @property
    @abstractmethod
    def server(self) -> str:
        """The group's server (Telegram: the group itself, Discord: the guild, Slack: the workspace)."""

    @property
    @abstractmethod
    def group_chat(self) -> ChatRef:
        """The group chat `group` writes in."""

    @abstractmethod
    def adapter(self, media_dir: Path, **section: Any) -> AdapterUnderTest[Channel]:
        """The channel alone against the fake."""

    @abstractmethod
    def dm(self, text: str, user: str) -> Any:
        """`user` writes to the bot directly; the platform's payload."""

    @abstractmethod
    def group(self, text: str, user: str, mention: bool) -> Any:
        """`user` writes in the group, mentioning the bot or not; the platform's payload."""

    @abstractmethod
    def dm_file(self, content: bytes, name: str, mime_type: str, user: str) -> Any:
        """`user` sends the bot a file directly."""

    @abstractmethod
    def redeliver(self, payload: Any) -> None:
        """The platform delivers `payload` again, as after a reconnect."""

    @abstractmethod
    def sent(self) -> list[str]:
        """The texts of the messages the bot created, in order."""

    @abstractmethod
    async def wait_sent(self, n: int) -> None:
        """Return once the bot has created `n` messages."""

    @abstractmethod
    def sent_ids(self) -> list[str]:
        """The platform ids of the messages the bot created, in order."""

    @abstractmethod
    def edits(self) -> list[tuple[str, str]]:
        """Each edit of the bot's messages: (the message's id, its new text as the user sees it)."""

    @abstractmethod
    def uploads(self) -> list[str]:
        """The names of the files the bot uploaded, in order."""

    @abstractmethod
    def buttons(self, index: int) -> list[str]:
        """The labels of the buttons under the bot's message number `index`."""

    @abstractmethod
    def press(self, index: int, prompt_id: str, choice_id: str, label: str, user: str) -> None:
        """`user` presses the button `label` (choice `choice_id` of prompt `prompt_id`) under message `index`."""

    @abstractmethod
    def marks(self) -> list[str]:
        """The reactions the bot has on users' messages now."""

    @abstractmethod
    def limit_send(self, retry_after: float) -> None:
        """The platform answers the bot's next send with a 429 asking it to wait `retry_after` seconds."""

    @abstractmethod
    def break_send(self) -> None:
        """The platform answers the bot's next send with a 503."""

    @abstractmethod
    def refuse_send(self) -> None:
        """The platform refuses the bot's next send for good (the bot may not write there)."""

    @abstractmethod
    def send_attempts(self) -> int:
        """How many times the bot asked the platform to create a message."""

    @abstractmethod
    async def wait_for(self, check: Callable[[], bool], what: str) -> None:
        """Return once `check()` holds, re-checked whenever the fake records a call; `what` names it on a timeout."""

    def direct_chat(self, user: str) -> ChatRef:
        """The bot's direct chat with `user` (on most platforms the chat's id is the user's)."""
        return ChatRef(self.name, user)

    def serving(self, gateway: Any) -> None:
        """Told that `gateway` (a started `tests.support.harness.GatewayUnderTest`) serves the platform, e.g. where its
        webhook is; most platforms need not know."""
        return None

    async def wait_uploads(self, n: int) -> None:
        """Return once the bot has uploaded `n` files."""
        await self.wait_for(lambda: len(self.uploads()) >= n, f"{n} uploads")

    def visible(self, text: str) -> str:
        """A sent text as the user sees it."""
        return text
