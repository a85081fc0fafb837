"""Found passages as the model reads them: dated, with who spoke, cut at word ends to fit."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo

from bot.memory.index.passages import MESSAGE_CHARS, RECALL_HEADING
from bot.memory.index.ranking import Hit
from bot.memory.index.windows import passage_chars

RECALL_END = "[end of recalled passages]"
BLOCK_HEAD = f"[{RECALL_HEADING} (this chat's memory; may be out of date)]"
MIN_PART = 60  # characters a cut message keeps at least
BLOCK_SLACK = 16  # the block's line breaks, and a window's labels beyond the estimate
DAYS_KEPT = 1024  # passages' day labels kept: the same passages come up turn after turn


def cut(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut at the last line or word end before it, with an ellipsis."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: max(0, limit - 1)]
    for end in ("\n", " "):
        at = head.rfind(end)
        if at >= limit // 2:
            return head[:at].rstrip() + "…"
    return head + "…"


@lru_cache(maxsize=DAYS_KEPT)
def day_label(ts: float, zone: ZoneInfo) -> str:
    """A passage's day as it is shown: `2026-03-05 (Thu)`."""
    return datetime.fromtimestamp(ts, zone).strftime("%Y-%m-%d (%a)")


def render_hit(hit: Hit, zone: ZoneInfo, asked_chars: int, answered_chars: int) -> str:
    """One passage: `2026-03-05 (Thu), Ann: …` and the reply under it; an entry or fact says where it is from."""
    passage = hit.stored.passage
    day = day_label(passage.ts, zone)
    if passage.kind == "entry":
        return f"{day}, conversation summary: {cut(passage.asked, asked_chars)}"
    if passage.kind == "fact":
        section = f" ({passage.answered})" if passage.answered else ""
        return f"memory fact{section}: {cut(passage.asked, asked_chars)}"
    lines = [f"{day}, {passage.speaker}: {cut(passage.asked, asked_chars)}" if passage.asked else f"{day}:"]
    if passage.answered and answered_chars > 0:
        lines.append(f"  you replied: {cut(passage.answered, answered_chars)}")
    return "\n".join(lines)


def render_window(hit: Hit, zone: ZoneInfo) -> str:
    """A hit with the exchanges around it, within the characters `windows.widen` gave it: the day and who said what,
    each message cut to its share when the window is longer; an entry or a fact as `render_hit` shows it."""
    chars = hit.chars or MESSAGE_CHARS
    if hit.stored.passage.kind != "exchange":
        return render_hit(hit, zone, chars, chars)
    window = hit.window or (hit.stored,)
    size = sum(passage_chars(found) for found in window)
    share = chars / size if size > chars else 1.0  # each message keeps this share of itself
    lines: list[str] = []
    day = ""
    for found in window:
        passage = found.passage
        date = day_label(passage.ts, zone)
        head = f"{date}, " if date != day else ""
        day = date
        if passage.asked:
            lines.append(f"{head}{passage.speaker}: {_part(passage.asked, share)}")
        elif head:
            lines.append(f"{date}:")
        if passage.answered:
            lines.append(f"  you replied: {_part(passage.answered, share)}")
    return "\n".join(lines)


def _part(text: str, share: float) -> str:
    return cut(text, max(MIN_PART, int(len(text) * share))) if share < 1.0 else text.strip()


def block_room(max_chars: int) -> int:
    """How many characters of a recalled block of `max_chars` its windows may take (the rest is its frame)."""
    return max_chars - len(BLOCK_HEAD) - len(RECALL_END) - BLOCK_SLACK


def recalled_block(hits: list[Hit], zone: ZoneInfo, max_chars: int) -> str:
    """The prompt's block of recalled windows (`windows.widen` chose them within `block_room`), best first, as many
    as fit `max_chars`; "" for none."""
    room = block_room(max_chars)
    lines: list[str] = []
    for hit in hits:
        text = render_window(hit, zone)
        if len(text) + 1 > room:
            break
        lines.append(text)
        room -= len(text) + 1
    if not lines:
        return ""
    return "\n".join([BLOCK_HEAD, *lines, RECALL_END])
