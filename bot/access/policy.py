"""Who may talk to the bot: owners, roles, allowlists, paired senders, and group mention gating."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.access.notices import IgnoreNotices, NoticesInProcess
from bot.access.pairing import Pairing
from bot.bus import InboundMessage, Trust
from bot.config.schema_channels import ChannelSection

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Serve:
    """Pass the message on, with the trust it earned."""

    message: InboundMessage


@dataclass(frozen=True, slots=True)
class SendPairingCode:
    """Reply with the sender's pairing code (again, when `repeated`); the model is not called."""

    code: str
    repeated: bool = False


@dataclass(frozen=True, slots=True)
class Ignore:
    """Drop the message; `reason` is for the log."""

    reason: str


Decision = Serve | SendPairingCode | Ignore


class AccessPolicy:
    """Decides for one channel whether a message is served, paired, or ignored."""

    def __init__(
        self,
        channel: str,
        owners: list[str],
        section: ChannelSection,
        pairing: Pairing,
        roles: Mapping[str, Trust] | None = None,
        notices: IgnoreNotices | None = None,
    ) -> None:
        self._channel = channel
        self._owners = frozenset(o.split(":", 1)[1] for o in owners if o.startswith(f"{channel}:"))
        self._roles = {k.split(":", 1)[1]: v for k, v in (roles or {}).items() if k.startswith(f"{channel}:")}
        self._allowed = frozenset(section.allow_from)
        self._section = section
        self._pairing = pairing
        self._notices = notices or NoticesInProcess()

    def decide(self, message: InboundMessage) -> Decision:
        """Owners, `roles:` entries, known senders (users) and open-policy strangers (guests) are served."""
        sender = message.sender_id
        if message.is_direct:
            return self._decide_direct(message)
        policy = self._section.group_policy
        if policy == "off":
            return Ignore("groups are off")
        if policy == "mention" and not message.mentioned:
            return Ignore("not mentioned")
        if (role := self.role_of(sender)) is not None:
            return Serve(replace(message, trust=role))
        return self._ignore_once(sender, "unknown sender in a group")

    def role_of(self, sender: str) -> Trust | None:
        """The sender's role, or None for a stranger this channel would not serve."""
        if sender in self._owners:
            return Trust.OWNER
        if sender in self._roles:
            return self._roles[sender]
        if self._is_known(sender):
            return Trust.USER
        return Trust.GUEST if self._section.dm_policy == "open" else None

    def _decide_direct(self, message: InboundMessage) -> Decision:
        sender = message.sender_id
        if (role := self.role_of(sender)) is not None:
            return Serve(replace(message, trust=role))
        if self._section.dm_policy == "allowlist":
            return self._ignore_once(sender, "not on the allowlist")
        code, is_new = self._pairing.request(self._channel, sender, message.sender_name or "")
        return SendPairingCode(code, repeated=not is_new)

    def _is_known(self, sender: str) -> bool:
        return sender in self._allowed or self._pairing.is_approved(self._channel, sender)

    def _ignore_once(self, sender: str, reason: str) -> Ignore:
        if self._notices.first(self._channel, sender):
            logger.info("%s: ignoring messages from %s (%s)", self._channel, sender, reason)
        return Ignore(reason)
