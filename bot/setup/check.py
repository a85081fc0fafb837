"""One check's outcome, as `relaybot doctor` prints it: ✓, ⚠ or ✗, what was found, and the fix."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

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
