"""What every chat platform adapter is: start, stop, send; plus optional abilities (typing, reactions, menus)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol, runtime_checkable

from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust
from bot.bus.messages import channel_key

if TYPE_CHECKING:
    from aiohttp import web

Publish = Callable[[InboundMessage], Awaitable[None]]


class Channel(ABC):
    """A platform adapter; it receives a `publish` callable and its own config section, nothing more."""

    name: ClassVar[str]
    account: str | None = None
    """Which of the platform's bots this instance is (`channels.<platform>.accounts`); None: the default bot."""

    @property
    def key(self) -> str:
        """How the gateway names this instance: `telegram`, or `telegram@work` for a named account."""
        return channel_key(self.name, self.account)

    def own(self, message: InboundMessage) -> InboundMessage:
        """`message` as this bot's: its chat names this instance's account, so replies go back through it."""
        if message.chat.account == self.account:
            return message
        return replace(message, chat=replace(message.chat, account=self.account))

    @abstractmethod
    async def start(self) -> None:
        """Connect and begin publishing inbound messages; raise if the platform is unreachable."""

    @abstractmethod
    async def stop(self) -> None:
        """Disconnect and release everything started."""

    @abstractmethod
    async def send(self, message: OutboundMessage) -> None:
        """Deliver one message to its chat; raise ChannelError when it cannot be delivered."""


@runtime_checkable
class ShowsTyping(Protocol):
    """A channel that can show a typing indicator in a chat."""

    async def show_typing(self, chat: ChatRef) -> None: ...


ReactionStatus = Literal["seen", "done", "failed"]
"""What a reaction on a user's message says: accepted (👀), answered, or failed; each platform picks its emoji."""


@runtime_checkable
class Reacts(Protocol):
    """A channel that can mark a user's message with a reaction; a failed reaction never affects the reply."""

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None: ...


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One command for a platform's native menu: its name (no slash), a short description, where it is offered,
    and the lowest role that may use it (a menu shows `privileged` commands only to those who may)."""

    name: str
    description: str
    scope: Literal["all", "private", "groups"] = "all"
    role: Trust = Trust.GUEST

    @property
    def privileged(self) -> bool:
        """Whether only admins and owners may use it."""
        return self.role.at_least(Trust.ADMIN)


@runtime_checkable
class OffersCommands(Protocol):
    """A channel with a native command menu (Telegram's menu, Discord application commands, Slack slash commands)."""

    async def set_commands(self, commands: Sequence[CommandSpec], privileged: Sequence[str] = ()) -> None:
        """Offer `commands`; the privileged ones only where the platform can scope a menu: to the chats of the
        `privileged` user ids (this platform's owners and admins), or to its own server administrators."""


@runtime_checkable
class Dismisses(Protocol):
    """A channel that shows an answer is coming before the gate decides (Discord's deferred "thinking…")."""

    async def dismiss(self, chat: ChatRef, message_id: str) -> None:
        """Message `message_id` gets no answer (not served, or dropped): withdraw what waits for one."""


InviteVerdict = Callable[[str, str | None], str | None]
"""verdict(inviter id, inviter name): None to accept the invite; else the text it is declined with (a pairing code)."""


@runtime_checkable
class AdmitsInvites(Protocol):
    """A channel the bot is invited into rooms on (Matrix): the access policy decides whom it joins."""

    def gate_invites(self, verdict: InviteVerdict) -> None: ...


@runtime_checkable
class ServesWebhook(Protocol):
    """A channel its platform calls over HTTP (WhatsApp): its routes are mounted on the gateway's HTTP server."""

    def webhook_routes(self) -> Sequence[web.RouteDef]: ...
