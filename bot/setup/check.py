"""One check's outcome, as `relaybot doctor` prints it: ✓, ⚠ or ✗, what was found, and the fix."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from bot.config.channels.base import ChannelSection

Status = Literal["ok", "warn", "fail"]
SYMBOLS: dict[Status, str] = {"ok": "✓", "warn": "⚠", "fail": "✗"}


@dataclass(frozen=True, slots=True)
class Check:
    """The outcome of one check; `fix` says what to do when it is not ok."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def line(self) -> str:
        """`✓ name: detail`, with ` → fix` when there is one."""
        return f"{SYMBOLS[self.status]} {self.name}: {self.detail}" + (f" → {self.fix}" if self.fix else "")

    def as_dict(self) -> dict[str, str]:
        """The check as JSON-ready fields, for `doctor --json`."""
        return asdict(self)


Probe = Callable[[str, "ChannelSection", float, str], Awaitable[list[Check]]]
"""probe(channel key, the bot's section, timeout, the config key its credentials sit under): a line per credential."""
