"""What may not go into MEMORY.md or HISTORY.md: text that poses as instructions or tags, and secrets."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

_INJECTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "an order to ignore earlier instructions",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?"
            r"\b(?:previous|prior|above|earlier|preceding|all|any|your|the system'?s?)\b[^.\n]{0,30}?"
            r"\b(?:instructions?|prompts?|rules|directions|guidelines|directives)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "a fake system, assistant or tool tag",
        re.compile(
            r"</?\s*(?:system|assistant|user|tool|tool_?(?:call|result|response|output)s?|function_?(?:call|result)s?"
            r"|instructions?|im_start|im_end)\b[^<>\n]{0,60}>",
            re.IGNORECASE,
        ),
    ),
    ("a fake system, assistant or tool tag", re.compile(r"\[/?(?:SYSTEM|INST|ASSISTANT|TOOL|SYS)\]", re.IGNORECASE)),
    ("a chat template token", re.compile(r"<\|[a-z_]{2,30}\|>|<</?SYS>>", re.IGNORECASE)),
    ("a fake role line", re.compile(r"^\s*(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:", re.MULTILINE)),
    (
        "a new system prompt",
        re.compile(
            r"\b(?:new|updated|real) system prompt\b|\byou are now (?:in )?(?:developer|god|jailbreak|DAN)\b", re.I
        ),
    ),
)

_SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an API key (sk-…)", re.compile(r"\bsk-(?:proj-|ant-|or-v1-|live_|test_)?[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}")),
    ("a Telegram bot token", re.compile(r"\b\d{6,12}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])")),
    ("a GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("a Discord bot token", re.compile(r"\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,}")),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{20,}")),
)
# `api_key = …`, `token: "…"`: what follows counts only when it looks random (long, mixed, high entropy).
_ASSIGNED = re.compile(
    r"\b(?:[a-z_]*(?:api|access|secret|private|client|auth)[_-]?(?:key|token|secret)|token|secret|password|passwd)"
    r"\s*[=:]\s*[\"']?(?P<value>[A-Za-z0-9_\-+/=.~]{16,})",
    re.IGNORECASE,
)
MIN_ENTROPY = 3.5  # bits per character; English words score lower, random keys higher


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a memory write may not contain: its kind, what it looks like, and where it is."""

    kind: Literal["injection", "secret"]
    what: str
    start: int
    end: int

    def reason(self) -> str:
        """In words for the model, without repeating the offending text."""
        if self.kind == "secret":
            return f"it contains what looks like {self.what}; memory must never hold secrets"
        return f"it contains {self.what}, which could be read as an instruction later"


def findings(text: str) -> list[Finding]:
    """Every injection pattern and secret found in `text`, in order of position."""
    found = [
        Finding("injection", what, match.start(), match.end())
        for what, pattern in _INJECTIONS
        for match in pattern.finditer(text)
    ]
    found += [
        Finding("secret", what, match.start(), match.end())
        for what, pattern in _SECRETS
        for match in pattern.finditer(text)
    ]
    found += [
        Finding("secret", "a key or token", match.start("value"), match.end("value"))
        for match in _ASSIGNED.finditer(text)
        if _looks_random(match["value"])
    ]
    return sorted(found, key=lambda finding: finding.start)


def _looks_random(value: str) -> bool:
    if not (re.search(r"\d", value) and re.search(r"[A-Za-z]", value)):
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= MIN_ENTROPY


def refusal(text: str) -> str | None:
    """Why `text` may not be written to memory (every distinct reason, joined), or None when it is clean."""
    reasons = list(dict.fromkeys(finding.reason() for finding in findings(text)))
    return "; ".join(reasons) or None


def added_lines(old: str, new: str) -> list[str]:
    """The lines of `new` that `old` does not have: what a rewrite adds (lines already there were checked before)."""
    before = set(old.splitlines())
    return [line for line in new.splitlines() if line not in before]


def without_findings(text: str, mark: str = "[removed]") -> str:
    """`text` with each offending span replaced by `mark`."""
    parts, last = [], 0
    for finding in findings(text):
        if finding.start < last:
            continue
        parts += [text[last : finding.start], mark]
        last = finding.end
    return "".join([*parts, text[last:]])
