"""A document as parts (pages, slides, sheets or sections of text) read one at a time, and the guards before opening."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bot.errors import UnreadableDocument

Unit = Literal["page", "slide", "sheet", "part"]
MB = 1024 * 1024
MAX_DOCUMENT_BYTES = 50 * MB
MAX_UNPACKED_BYTES = 300 * MB  # what an Office file (a zip) may expand to
MAX_RATIO = 150  # Office XML compresses about 10:1; a member at 150:1 and more is a bomb
MAX_MEMBERS = 20_000
PART_CHARS = 8_000  # a section of a document without pages


@dataclass(frozen=True)
class Document:
    """`count` parts of one `unit`, named by `labels`, whose text `text_of(index)` reads on demand (0-based)."""

    kind: str
    unit: Unit
    labels: list[str]
    text_of: Callable[[int], str]
    notes: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.labels)


def check_size(path: Path, name: str) -> None:
    """Refuse a file too large to read as a document."""
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise UnreadableDocument(
            f"{name} is {size / MB:.1f} MB; documents up to {MAX_DOCUMENT_BYTES // MB} MB can be read. "
            "run_python can work through it in pieces if it is offered."
        )


def check_zip(path: Path, name: str) -> None:
    """Refuse an Office file (a zip) that is damaged or would expand into far more than it holds: a zip bomb."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise UnreadableDocument(f"{name} is damaged: it is not a readable Office file ({exc}).") from exc
    unpacked = sum(member.file_size for member in members)
    swollen = any(
        member.file_size > MB and member.file_size > MAX_RATIO * max(member.compress_size, 1) for member in members
    )
    if len(members) > MAX_MEMBERS or unpacked > MAX_UNPACKED_BYTES or swollen:
        raise UnreadableDocument(
            f"{name} was not opened: it would unpack to {unpacked / MB:,.0f} MB from {path.stat().st_size:,} bytes, "
            "which is how a zip bomb looks."
        )


def sections(text: str, size: int = PART_CHARS) -> list[str]:
    """Text cut into parts of about `size` characters, at paragraph ends where there are any."""
    parts: list[str] = []
    current: list[str] = []
    length = 0
    for paragraph in text.split("\n"):
        while len(paragraph) > size:
            if current:
                parts.append("\n".join(current))
                current, length = [], 0
            parts.append(paragraph[:size])
            paragraph = paragraph[size:]
        if current and length + len(paragraph) > size:
            parts.append("\n".join(current))
            current, length = [], 0
        current.append(paragraph)
        length += len(paragraph) + 1
    if current and "".join(current).strip():
        parts.append("\n".join(current))
    return parts or [""]


def text_document(kind: str, text: str) -> Document:
    """A document without pages: its text in sections."""
    parts = sections(text)
    return Document(kind, "part", [f"part {n}" for n in range(1, len(parts) + 1)], parts.__getitem__)
