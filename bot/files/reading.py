"""read_document's work: open a document by its type, pick the asked pages or sheet, and show them with an index."""

from __future__ import annotations

import re
from pathlib import Path

from bot.errors import UnreadableDocument
from bot.files.document import Document, check_size, check_zip, text_document
from bot.files.office import open_docx, open_pptx
from bot.files.pdf import open_pdf
from bot.files.sheets import open_csv, open_xlsx

SHOW_CHARS = 12_000  # what one read shows: fits the default tool result limit (16,000) with the index
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst", ".log", ".json", ".yaml", ".yml", ".xml", ".toml"})
_SPAN = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$")


def open_document(path: Path, name: str, mime_type: str, cells: str | None = None) -> Document:
    """The document at `path`, by type; UnreadableDocument when it is too large, damaged, locked or unknown."""
    check_size(path, name)
    suffix = Path(name).suffix.lower() or path.suffix.lower()
    mime = mime_type.split(";", 1)[0].strip().lower()
    if mime == "application/pdf" or suffix == ".pdf":
        return open_pdf(path, name)
    if mime in (DOCX, XLSX, PPTX) or suffix in (".docx", ".xlsx", ".xlsm", ".pptx"):
        check_zip(path, name)
        if mime == DOCX or suffix == ".docx":
            return open_docx(path, name)
        if mime == PPTX or suffix == ".pptx":
            return open_pptx(path, name)
        return open_xlsx(path, name, cells)
    if mime == "text/csv" or suffix == ".csv":
        return open_csv(path, name)
    if mime in ("text/html", "application/xhtml+xml") or suffix in (".html", ".htm"):
        return text_document("web page", _html_text(path))
    if mime.startswith("text/") or suffix in TEXT_SUFFIXES:
        return text_document("text file", _plain_text(path, name))
    raise UnreadableDocument(
        f"{name} ({mime_type}) is not a document type read_document knows: PDF, Word, Excel, PowerPoint, HTML, "
        "Markdown, CSV or text."
    )


def pick(spec: str | None, count: int) -> range:
    """The 0-based parts `spec` names (`3`, `3-7`, `12-`), or all of them; UnreadableDocument when it names none."""
    if not spec:
        return range(count)
    match = _SPAN.match(spec)
    if match is None:
        raise UnreadableDocument(f"{spec!r} is not a page span; use a number (3) or a span (3-7, 12-).")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else (count if match.group(0).strip().endswith("-") else first)
    if first < 1 or first > count or last < first:
        raise UnreadableDocument(
            f"{spec!r} is outside the document: it has {count} {'part' if count == 1 else 'parts'}."
        )
    return range(first - 1, min(last, count))


def sheet_index(document: Document, sheet: str) -> int:
    """The position of the sheet named (or numbered) `sheet`; UnreadableDocument listing the sheets otherwise."""
    names = [label.removeprefix("sheet ").rsplit(" (", 1)[0] for label in document.labels]
    for index, title in enumerate(names):
        if title.lower() == sheet.strip().lower() or sheet.strip() == str(index + 1):
            return index
    raise UnreadableDocument(f"there is no sheet {sheet!r}; the sheets are: {', '.join(names)}.")


def show(document: Document, name: str, file_id: str, chosen: range) -> str:
    """The chosen parts from the first, up to SHOW_CHARS, under a one-line index and over a note on what is left."""
    unit = document.unit
    header = f"{name}: {document.kind}, {document.count} {unit}{'s' if document.count != 1 else ''}"
    if unit == "sheet":
        header += ": " + "; ".join(document.labels)
    lines = [header, *(f"[{note}]" for note in document.notes)]
    shown = 0
    used = 0
    for index in chosen:
        text = document.text_of(index)
        if shown and used + len(text) > SHOW_CHARS:
            break
        if len(text) > SHOW_CHARS:
            text = text[:SHOW_CHARS] + f"\n[{document.labels[index]} is cut after {SHOW_CHARS:,} characters]"
        lines.append(f"--- {document.labels[index]} ---\n{text or '(no text)'}")
        used += len(text)
        shown += 1
    rest = chosen[shown:]
    if rest:
        if unit == "sheet":
            following = f"sheet={document.labels[rest[0]].removeprefix('sheet ').rsplit(' (', 1)[0]!r}"
        else:
            following = f"pages={f'{rest[0] + 1}-{rest[-1] + 1}' if len(rest) > 1 else str(rest[0] + 1)!r}"
        lines.append(f"[{len(rest)} more {unit}s not shown; read_document(file_id={file_id!r}, {following}) reads on]")
    return "\n\n".join(lines)


def _plain_text(path: Path, name: str) -> str:
    raw = path.read_bytes()
    if b"\0" in raw[:8192]:
        raise UnreadableDocument(f"{name} is a binary file, not text.")
    return raw.decode("utf-8", errors="replace")


def _html_text(path: Path) -> str:
    """A web page's main text as Markdown (tables kept) through trafilatura, else all of its text."""
    html = path.read_text(encoding="utf-8", errors="replace")
    try:
        import trafilatura

        text = trafilatura.extract(html, output_format="markdown", include_tables=True, include_links=False)
    except Exception:  # trafilatura is best effort: the plain text below always works
        text = None
    if text:
        return str(text)
    import lxml.html

    return str(lxml.html.fromstring(html or "<p></p>").text_content())
