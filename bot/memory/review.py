"""A consolidation's update, reviewed before it is written: no injections or secrets, new facts sourced, capped."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.memory.facts import fit_under, with_provenance
from bot.memory.files import MEMORY_CAP_CHARS, MemoryUpdate
from bot.memory.hygiene import added_lines, findings, refusal, without_findings


@dataclass(frozen=True, slots=True)
class Source:
    """Where new facts come from: the chat (its session key) and the day, as their suffix records them."""

    chat: str
    day: str


@dataclass(frozen=True, slots=True)
class Reviewed:
    """The update as it is written, how many offending parts were taken out, and the facts moved out for the cap."""

    update: MemoryUpdate
    removed: int = 0
    moved: list[str] = field(default_factory=list)


def problems(update: MemoryUpdate, current: str, source: Source) -> list[str]:
    """What keeps an update from being written as it is, in words for the model; empty when nothing does."""
    found = []
    if why := refusal(update.history_entry):
        found.append(f"history_entry: {why}")
    if update.memory is not None:
        if why := refusal("\n".join(added_lines(current, update.memory))):
            found.append(f"memory_update: {why}")
        size = len(with_provenance(current, update.memory, source.chat, source.day))
        if size > MEMORY_CAP_CHARS:
            found.append(
                f"memory_update has {size} characters with the sources of new facts; MEMORY.md must stay under "
                f"{MEMORY_CAP_CHARS}: merge duplicates, drop stale and minor details, keep what matters most"
            )
    return found


def settle(update: MemoryUpdate, current: str, source: Source) -> Reviewed:
    """The update made safe to write: offending parts out, new facts sourced, MEMORY.md fitted under the cap."""
    history = without_findings(update.history_entry)
    removed = len(findings(update.history_entry))
    if update.memory is None:
        return Reviewed(MemoryUpdate(history, None), removed)
    before = set(current.splitlines())
    lines = update.memory.splitlines()
    kept = [line for line in lines if line in before or not findings(line)]
    removed += len(lines) - len(kept)
    memory = with_provenance(current, "\n".join(kept), source.chat, source.day)
    memory, moved = fit_under(memory, MEMORY_CAP_CHARS)
    return Reviewed(MemoryUpdate(history, memory.strip() or None), removed, moved)
