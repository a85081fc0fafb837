"""Found passages as the model reads them: dated, with who spoke, cut at word ends to fit."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.memory.index.passages import RECALL_HEADING
from bot.memory.index.ranking import Hit

RECALL_END = "[end of recalled passages]"


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


def render_hit(hit: Hit, zone: ZoneInfo, asked_chars: int, answered_chars: int) -> str:
    """One passage: `2026-03-05 (Thu), Ann: …` and the reply under it; an entry or fact says where it is from."""
    passage = hit.stored.passage
    day = datetime.fromtimestamp(passage.ts, zone).strftime("%Y-%m-%d (%a)")
    if passage.kind == "entry":
        return f"{day}, conversation summary: {cut(passage.asked, asked_chars)}"
    if passage.kind == "fact":
        section = f" ({passage.answered})" if passage.answered else ""
        return f"memory fact{section}: {cut(passage.asked, asked_chars)}"
    lines = [f"{day}, {passage.speaker}: {cut(passage.asked, asked_chars)}" if passage.asked else f"{day}:"]
    if passage.answered and answered_chars > 0:
        lines.append(f"  you replied: {cut(passage.answered, answered_chars)}")
    return "\n".join(lines)


def recalled_block(hits: list[Hit], zone: ZoneInfo, max_chars: int) -> str:
    """The prompt's block of recalled passages, best first, as many as fit `max_chars`; "" for none."""
    if not hits:
        return ""
    head = f"[{RECALL_HEADING} (this chat's memory; may be out of date)]"
    room = max_chars - len(head) - len(RECALL_END) - 2
    share = max(200, room // min(len(hits), 3))  # the best three get a fair share; later ones what is left
    lines: list[str] = []
    for hit in hits:
        text = render_hit(hit, zone, share * 2 // 3, share // 3)
        if len(text) + 1 > room:
            text = render_hit(hit, zone, room * 2 // 3, room // 3 - 16)
            if len(text) + 1 > room or room < 80:
                break
        lines.append(text)
        room -= len(text) + 1
    if not lines:
        return ""
    return "\n".join([head, *lines, RECALL_END])
