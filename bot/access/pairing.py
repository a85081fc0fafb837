"""Pairing: an unknown sender gets a one-time code, and an owner's approval of it makes them a known user."""

from __future__ import annotations

import fcntl
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bot.storage.private_file import write_private

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
    def approve(self, channel: str, code: str, person: str | None = None) -> str | None: ...
    def revoke(self, channel: str, user_id: str) -> bool: ...
    def pending(self) -> list[PendingPairing]: ...
    def approved(self) -> dict[str, list[str]]: ...
    def people(self) -> dict[str, str]: ...


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

    def approve(self, channel: str, code: str, person: str | None = None) -> str | None:
        """Approve the sender holding `code` (linked to `person` when given); their user id, or None if no code
        matches."""
        with self._locked() as data:
            match = take_code(data.setdefault("pending", {}).setdefault(channel, []), code, self._clock())
            if match is None:
                return None
            approved = data.setdefault("approved", {}).setdefault(channel, [])
            if match["user_id"] not in approved:
                approved.append(match["user_id"])
            if person:
                data.setdefault("people", {})[f"{channel}:{match['user_id']}"] = person
            return str(match["user_id"])

    def revoke(self, channel: str, user_id: str) -> bool:
        """Remove an approved sender; False when they were not approved."""
        with self._locked() as data:
            approved = data.setdefault("approved", {}).setdefault(channel, [])
            if user_id not in approved:
                return False
            approved.remove(user_id)
            data.setdefault("people", {}).pop(f"{channel}:{user_id}", None)
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

    def people(self) -> dict[str, str]:
        """Accounts (`channel:user_id`) linked to a person at approval (`--as`)."""
        return dict(self._read().get("people", {}))

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
            write_private(self._path, json.dumps(data, indent=1))
            self._cache = None


def pairing_message(channel: str, code: str) -> str:
    """The one reply an unknown sender gets."""
    return (
        f"Hi! I only talk with people my owner has approved. Your pairing code is {code}.\n"
        f"Ask the owner to run: relaybot pairing approve {channel} {code}\n"
        f"(or an admin to send /pair approve {code} in a chat with me)\n"
        "The code is valid for one hour."
    )
