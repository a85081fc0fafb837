"""A LoCoMo conversation (upstream `locomo10_v2` format) as the bench plays it: exchanges and questions."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
GREETING = "Hi"  # the user's first message of a session that the other speaker opens
NO_REPLY = "OK."  # the bot's reply where a session ends on the user's lines
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class Line:
    """One line of the dialogue: its id (`D3:7`), who said it, what was said, and the shared photo's caption."""

    dia_id: str
    speaker: str
    text: str
    caption: str = ""

    @property
    def sent(self) -> str:
        """The line as a message carries it: a shared photo kept as its caption."""
        return f"{self.text} [shares {self.caption}]" if self.caption else self.text


@dataclass(frozen=True)
class Exchange:
    """One user message and the bot's reply, from one session; the ids of the lines they carry."""

    session: int
    asked: str
    answered: str
    dia_ids: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    """A question with named evidence: its tag in the chat (`q26-3`), category (1-4) and evidence line ids."""

    tag: str
    text: str
    category: int
    evidence: tuple[str, ...]
    answer: str

    @property
    def asked(self) -> str:
        """The message that asks it in the chat."""
        return f"{self.text} [{self.tag}]"


@dataclass(frozen=True)
class Conversation:
    """One conversation: its lines by id, its exchanges in order, its questions, each session's event list."""

    name: str
    lines: dict[str, Line]
    exchanges: tuple[Exchange, ...]
    questions: tuple[Question, ...]
    events: dict[int, str]


def group(lines: list[Line], user: str, session: int) -> list[Exchange]:
    """A session's exchanges: the user's consecutive lines one message, the other speaker's the reply; a session
    that the other speaker opens starts with a greeting, one that the user ends gets a short reply."""
    runs: list[tuple[str, list[Line]]] = []
    for line in lines:
        if runs and runs[-1][0] == line.speaker:
            runs[-1][1].append(line)
        else:
            runs.append((line.speaker, [line]))
    if runs and runs[0][0] != user:
        runs.insert(0, (user, []))
    exchanges = []
    for start in range(0, len(runs), 2):
        asked = runs[start][1]
        answered = runs[start + 1][1] if start + 1 < len(runs) else []
        exchanges.append(
            Exchange(
                session,
                "\n".join(line.sent for line in asked) or GREETING,
                "\n".join(line.sent for line in answered) or NO_REPLY,
                tuple(line.dia_id for line in [*asked, *answered]),
            )
        )
    return exchanges


def events_of(data: dict[str, Any], session: int) -> str:
    """LoCoMo's event list for a session as one summary, dated; "" when it lists none."""
    found = data.get(f"events_session_{session}") or {}
    said = [event for speaker, events in found.items() if speaker != "date" for event in events]
    return f"{found.get('date', '')}: {' '.join(said)}" if said else ""


def parse(name: str, data: dict[str, Any]) -> Conversation:
    """A conversation from its JSON; questions without evidence or outside categories 1-4 left out."""
    user = data["speaker_a"]
    numbers = sorted(int(m.group(1)) for key in data if (m := _SESSION.fullmatch(key)))
    lines: dict[str, Line] = {}
    exchanges: list[Exchange] = []
    for number in numbers:
        said = [
            Line(t["dia_id"], t["speaker"], t["text"], t.get("blip_caption", "")) for t in data[f"session_{number}"]
        ]
        lines.update((line.dia_id, line) for line in said)
        exchanges.extend(group(said, user, number))
    questions = []
    for n, qa in enumerate(data["qa"], 1):
        evidence = tuple(e for item in qa.get("evidence") or () for e in _EVIDENCE.findall(item) if e in lines)
        if evidence and qa["category"] in CATEGORIES:
            questions.append(Question(f"q{name}-{n}", qa["question"], qa["category"], evidence, str(qa["answer"])))
    events = {number: text for number in numbers if (text := events_of(data, number))}
    return Conversation(name, lines, tuple(exchanges), tuple(questions), events)


def load(folder: Path) -> list[Conversation]:
    """Every conversation of a folder of LoCoMo files (`26.json`, …), in the order of their names."""
    return [parse(path.stem, json.loads(path.read_text())) for path in sorted(folder.glob("*.json"))]
