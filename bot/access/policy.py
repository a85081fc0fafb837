"""Who may talk to the bot: owners, allowlists, pairing codes, and group mention gating."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from bot.bus import InboundMessage, Trust
from bot.config.schema_channels import ChannelSection

logger = logging.getLogger(__name__)

PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
PAIRING_CODE_LENGTH = 8
PAIRING_TTL = 3600.0


@dataclass(frozen=True, slots=True)
class PendingPairing:
    """A code handed to an unknown sender, waiting for an owner's approval."""

    channel: str
    code: str
    user_id: str
    name: str
    created: float


class Pairing(Protocol):
    """Pending pairing codes and approved senders; on files (`PairingBook`) or in Redis (`RedisPairingBook`)."""

    def is_approved(self, channel: str, user_id: str) -> bool: ...
    def request(self, channel: str, user_id: str, name: str) -> tuple[str, bool]: ...
    def approve(self, channel: str, code: str) -> str | None: ...
    def revoke(self, channel: str, user_id: str) -> bool: ...
    def pending(self) -> list[PendingPairing]: ...
    def approved(self) -> dict[str, list[str]]: ...


def drop_expired(entries: list[dict[str, Any]], now: float) -> None:
    """Remove codes older than PAIRING_TTL from a channel's pending list (oldest first), in place."""
    entries[:] = [e for e in entries if now - e["created"] < PAIRING_TTL]


def claim_code(
    entries: list[dict[str, Any]],
    channel: str,
    user_id: str,
    name: str,
    now: float,
    choose: Callable[[str], str],
    max_pending: int,
) -> tuple[str, bool]:
    """The sender's live code, or a new one appended (dropping the oldest past `max_pending`); mutates `entries`."""
    drop_expired(entries, now)
    for entry in entries:
        if entry["user_id"] == user_id:
            return entry["code"], False
    while len(entries) >= max_pending:
        dropped = entries.pop(0)  # appended in time order: the oldest
        logger.warning("%s: oldest pairing code (user %s) dropped for a new one", channel, dropped["user_id"])
    code = "".join(choose(PAIRING_ALPHABET) for _ in range(PAIRING_CODE_LENGTH))
    entries.append({"code": code, "user_id": user_id, "name": name, "created": now})
    return code, True


def take_code(entries: list[dict[str, Any]], code: str, now: float) -> dict[str, Any] | None:
    """Remove and return the live entry holding `code` (any case, spaces trimmed); mutates `entries`."""
    drop_expired(entries, now)
    match = next((e for e in entries if e["code"] == code.strip().upper()), None)
    if match is not None:
        entries.remove(match)
    return match


class PairingBook:
    """Pending codes and approved senders in one JSON file, shared safely between processes."""

    def __init__(
        self,
        path: Path,
        clock: Callable[[], float] = time.time,
        choose: Callable[[str], str] = secrets.choice,
        max_pending: int = 10,
    ) -> None:
        self._path = path
        self._max_pending = max_pending
        self._clock = clock
        self._choose = choose
        self._cache: tuple[tuple[int, int, int], dict[str, Any]] | None = None

    def is_approved(self, channel: str, user_id: str) -> bool:
        """Whether an owner approved this sender (re-read when the file changes)."""
        return user_id in self._read().get("approved", {}).get(channel, [])

    def request(self, channel: str, user_id: str, name: str) -> tuple[str, bool]:
        """The sender's code and whether it is new; a full channel drops its oldest code, so nobody is locked out."""
        with self._locked() as data:
            pending = data.setdefault("pending", {}).setdefault(channel, [])
            return claim_code(pending, channel, user_id, name, self._clock(), self._choose, self._max_pending)

    def approve(self, channel: str, code: str) -> str | None:
        """Approve the sender holding `code`; return their user id, or None if no live code matches."""
        with self._locked() as data:
            match = take_code(data.setdefault("pending", {}).setdefault(channel, []), code, self._clock())
            if match is None:
                return None
            approved = data.setdefault("approved", {}).setdefault(channel, [])
            if match["user_id"] not in approved:
                approved.append(match["user_id"])
            return str(match["user_id"])

    def revoke(self, channel: str, user_id: str) -> bool:
        """Remove an approved sender; False when they were not approved."""
        with self._locked() as data:
            approved = data.setdefault("approved", {}).setdefault(channel, [])
            if user_id not in approved:
                return False
            approved.remove(user_id)
            return True

    def pending(self) -> list[PendingPairing]:
        """Every live pending code, oldest first."""
        data = self._read()
        now = self._clock()
        return [
            PendingPairing(channel, e["code"], e["user_id"], e.get("name", ""), e["created"])
            for channel, entries in data.get("pending", {}).items()
            for e in entries
            if now - e["created"] < PAIRING_TTL
        ]

    def approved(self) -> dict[str, list[str]]:
        """Approved sender ids by channel."""
        return {k: list(v) for k, v in self._read().get("approved", {}).items()}

    def _read(self) -> dict[str, Any]:
        try:
            stat = self._path.stat()
        except FileNotFoundError:
            return {}
        version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if self._cache and self._cache[0] == version:
            return self._cache[1]
        data = json.loads(self._path.read_text(encoding="utf-8") or "{}")
        self._cache = (version, data)
        return data

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        """Read-modify-write under an exclusive lock; the file is replaced atomically."""
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._cache = None
            data = self._read()
            yield data
            temp = self._path.with_suffix(".tmp")
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1)
            os.replace(temp, self._path)
            self._cache = None


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


class IgnoreNotices(Protocol):
    """Remembers which ignored senders were already logged, so each is logged once."""

    def first(self, channel: str, sender: str) -> bool: ...


class NoticesInProcess:
    """Ignored senders logged by this process (the local backend's; Redis shares them between gateways)."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()

    def first(self, channel: str, sender: str) -> bool:
        """True the first time `sender` on `channel` is asked about."""
        if (channel, sender) in self._seen:
            return False
        self._seen.add((channel, sender))
        return True


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


def pairing_message(channel: str, code: str) -> str:
    """The one reply an unknown sender gets."""
    return (
        f"Hi! I only talk with people my owner has approved. Your pairing code is {code}.\n"
        f"Ask the owner to run: relaybot pairing approve {channel} {code}\n"
        f"(or an admin to send /pair approve {code} in a chat with me)\n"
        "The code is valid for one hour."
    )
