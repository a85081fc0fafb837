"""The optional abilities of a channel, each a small Protocol the gateway checks with `isinstance`: typing, reactions,
a command menu, dismissing, invites, webhooks, live replies, liveness and catching up."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeGuard, runtime_checkable

if TYPE_CHECKING:
    from aiohttp import web

    from bot.bus import ChatRef
    from bot.commands.catalogue import CommandSpec
    from channels.catchup import RecentChats
    from channels.liveness import Liveness
    from channels.streaming import LiveReply


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


@runtime_checkable
class StreamsReplies(Protocol):
    """A channel that can show replies live; None when the chat or its config does not stream."""

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None: ...


@runtime_checkable
class ReportsLiveness(Protocol):
    """A channel that notes each successful poll or event in `liveness`, so a wedged poller can be noticed."""

    liveness: Liveness


@runtime_checkable
class CatchesUp(Protocol):
    """A channel that, given its active chats, reads at start what was sent to them while it was down."""

    def remember_chats(self, chats: RecentChats) -> None: ...


_DECIDED: dict[tuple[type, Any], bool] = {}


def _decided_per_class(channel: object, ability: Any) -> bool:
    """`isinstance(channel, ability)` for an ability of methods only, decided once per channel class: typing walks
    the Protocol's members on every check (several microseconds), and a class's methods do not change."""
    key = (type(channel), ability)
    decided = _DECIDED.get(key)
    if decided is None:
        decided = _DECIDED[key] = isinstance(channel, ability)
    return decided


def shows_typing(channel: object) -> TypeGuard[ShowsTyping]:
    """Whether the channel's class implements ShowsTyping (decided once per class)."""
    return _decided_per_class(channel, ShowsTyping)


def reacts(channel: object) -> TypeGuard[Reacts]:
    """Whether the channel's class implements Reacts (decided once per class)."""
    return _decided_per_class(channel, Reacts)


def dismisses(channel: object) -> TypeGuard[Dismisses]:
    """Whether the channel's class implements Dismisses (decided once per class)."""
    return _decided_per_class(channel, Dismisses)


def streams_replies(channel: object) -> TypeGuard[StreamsReplies]:
    """Whether the channel's class implements StreamsReplies (decided once per class)."""
    return _decided_per_class(channel, StreamsReplies)
