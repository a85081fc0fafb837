"""Who may talk to the bot: owners, roles, allowlists, paired senders, and group mention gating."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.access.identities import NOBODY, Identities
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
        identities: Identities = NOBODY,
    ) -> None:
        self._channel = channel
        self._owners = frozenset(owners)
        self._roles = dict(roles or {})
        self._identities = identities
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
            return self._serve(message, role)
        return self._ignore_once(sender, "unknown sender in a group")

    def role_of(self, sender: str) -> Trust | None:
        """The sender's role, or None for a stranger this channel would not serve; a person's role covers all
        their accounts."""
        refs = self._identities.refs_of(self._channel, sender)
        if refs & self._owners:
            return Trust.OWNER
        listed = [self._roles[ref] for ref in refs if ref in self._roles]
        if listed:
            return max(listed, key=lambda role: role.rank)
        if self._is_known(sender, refs):
            return Trust.USER
        return Trust.GUEST if self._section.dm_policy == "open" else None

    def _serve(self, message: InboundMessage, role: Trust) -> Serve:
        person = self._identities.person_of(self._channel, message.sender_id)
        return Serve(replace(message, trust=role, person=person))

    def _decide_direct(self, message: InboundMessage) -> Decision:
        sender = message.sender_id
        if (role := self.role_of(sender)) is not None:
            return self._serve(message, role)
        if self._section.dm_policy == "allowlist":
            return self._ignore_once(sender, "not on the allowlist")
        code, is_new = self._pairing.request(self._channel, sender, message.sender_name or "")
        return SendPairingCode(code, repeated=not is_new)

    def _is_known(self, sender: str, refs: set[str]) -> bool:
        """Allowlisted here, or any of the person's accounts approved by pairing."""
        if sender in self._allowed:
            return True
        accounts = (ref.split(":", 1) for ref in refs if ":" in ref)
        return any(self._pairing.is_approved(channel, user) for channel, user in accounts)

    def _ignore_once(self, sender: str, reason: str) -> Ignore:
        if self._notices.first(self._channel, sender):
            logger.info("%s: ignoring messages from %s (%s)", self._channel, sender, reason)
        return Ignore(reason)
