"""Who may talk to the bot: owners, roles, allowlists, paired senders, and group mention gating."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from bot.access.activation import Activations, policy_with
from bot.access.identities import NOBODY, Identities
from bot.access.notices import IgnoreNotices, NoticesInProcess
from bot.access.pairing import Pairing
from bot.bus import GroupLine, InboundMessage, Trust
from bot.chats.rules import ChatRules, ChatRulesBook
from bot.config.channels.base import ChannelSection

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


@dataclass(frozen=True, slots=True)
class Overheard:
    """A group message not addressed to the bot: never answered, kept (up to `limit` lines) for the next mention."""

    line: GroupLine
    limit: int
    chars: int


@dataclass(frozen=True, slots=True)
class Reply:
    """Answer at once with a fixed text (a command the policy carries out itself); the model is not called."""

    text: str


Decision = Serve | SendPairingCode | Ignore | Overheard | Reply


class GateCommands(Protocol):
    """Commands answered at the gate, before a group's mention rule: a served sender's unaddressed one counts too."""

    def answer(self, message: InboundMessage, role: Trust) -> str | None:
        """The reply, or None when the message is none of these commands."""


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
        rules: ChatRulesBook | None = None,
        activations: Activations | None = None,
        identities: Identities = NOBODY,
        gate_commands: GateCommands | None = None,
        pairing_for: Callable[[InboundMessage], Pairing] | None = None,
    ) -> None:
        self._channel = channel
        self._owners = frozenset(owners)
        self._roles = dict(roles or {})
        self._identities = identities
        self._allowed = frozenset(section.allow_from)
        self._section = section
        self._pairing = pairing
        self._pairing_for = pairing_for  # the book of the agent a message goes to, where agents keep their own
        self._notices = notices or NoticesInProcess()
        self._rules = rules or ChatRulesBook({channel: section})
        self._activations = activations
        self._gate_commands = gate_commands

    def decide(self, message: InboundMessage) -> Decision:
        """Owners, `roles:` entries, known senders (users) and open-policy strangers (guests) are served.

        A served message's quote and context lines get their authors' trust. In a group, the most specific rule
        (`groups.<id>`, `topics.<thread id>`) and the group's `/activation` decide; a known sender's message
        that is not addressed to the bot is overheard, for the next mention's context.
        """
        sender = message.sender_id
        pairing = self._pairing_for(message) if self._pairing_for else self._pairing
        if message.is_direct:
            return self._decide_direct(message, pairing)
        rules = self._rules.for_chat(message.chat, message.server_id)
        if rules.group_policy == "off":
            return Ignore("groups are off")
        role = self.role_of(sender, rules.allow_from, pairing)
        if role is not None and (reply := self._at_gate(message, role)) is not None:
            return Reply(reply)
        activation = self._activations.of(message.chat) if self._activations else None
        policy = policy_with(rules.group_policy, activation)
        if policy == "mention" and not (message.mentioned or message.press):
            return self._overheard(message, role, rules)
        if role is not None:
            return Serve(self._with_trust(message, role, rules.allow_from, pairing))
        return self._ignore_once(sender, "unknown sender in a group")

    def role_of(
        self, sender: str, allow_from: frozenset[str] | None = None, pairing: Pairing | None = None
    ) -> Trust | None:
        """The sender's role (`allow_from` in place of the channel's list), or None for a stranger not served.

        A person's role covers all their accounts (`identities`); `pairing` is the book to look in (the default's).
        """
        refs = self._identities.refs_of(self._channel, sender)
        if refs & self._owners:
            return Trust.OWNER
        listed = [self._roles[ref] for ref in refs if ref in self._roles]
        if listed:
            return max(listed, key=lambda role: role.rank)
        if self._is_known(sender, refs, self._allowed if allow_from is None else allow_from, pairing or self._pairing):
            return Trust.USER
        return Trust.GUEST if self._section.dm_policy == "open" else None

    def _at_gate(self, message: InboundMessage, role: Trust) -> str | None:
        return self._gate_commands.answer(message, role) if self._gate_commands is not None else None

    def _overheard(self, message: InboundMessage, role: Trust | None, rules: ChatRules) -> Decision:
        if role is None or rules.group_history == 0 or message.edit_of or not message.text.strip():
            return Ignore("not mentioned")
        line = GroupLine(message.sender_id, message.sender_name, message.text, message.created_at, role)
        return Overheard(line, rules.group_history, rules.group_history_chars)

    def _with_trust(
        self, message: InboundMessage, role: Trust, allow_from: frozenset[str] | None, pairing: Pairing
    ) -> InboundMessage:
        """The message at its sender's role, its quote's and context lines' authors at theirs (strangers: guests)."""
        quote = message.reply_to
        if quote is not None:
            author = quote.author_id
            trust = role if quote.from_bot else (self.role_of(author, allow_from, pairing) if author else None)
            quote = replace(quote, trust=trust or Trust.GUEST)
        context = tuple(
            replace(line, trust=self.role_of(line.sender_id, allow_from, pairing) or Trust.GUEST)
            for line in message.context
        )
        person = self._identities.person_of(self._channel, message.sender_id)
        return replace(message, trust=role, reply_to=quote, context=context, person=person)

    def _decide_direct(self, message: InboundMessage, pairing: Pairing) -> Decision:
        sender = message.sender_id
        if (role := self.role_of(sender, None, pairing)) is not None:
            if (reply := self._at_gate(message, role)) is not None:
                return Reply(reply)
            return Serve(self._with_trust(message, role, None, pairing))
        if self._section.dm_policy == "allowlist":
            return self._ignore_once(sender, "not on the allowlist")
        code, is_new = pairing.request(self._channel, sender, message.sender_name or "")
        return SendPairingCode(code, repeated=not is_new)

    def _is_known(self, sender: str, refs: set[str], allowed: frozenset[str], pairing: Pairing) -> bool:
        """Allowlisted here, or any of the person's accounts approved by pairing."""
        if sender in allowed:
            return True
        accounts = (ref.split(":", 1) for ref in refs if ":" in ref)
        return any(pairing.is_approved(channel, user) for channel, user in accounts)

    def _ignore_once(self, sender: str, reason: str) -> Ignore:
        if self._notices.first(self._channel, sender):
            logger.info("%s: ignoring messages from %s (%s)", self._channel, sender, reason)
        return Ignore(reason)
