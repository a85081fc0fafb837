"""Word and PowerPoint files as Markdown: headings, paragraphs and tables kept; slides one part each."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bot.errors import UnreadableDocument
from bot.files.document import Document, text_document


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """Rows of cells as a Markdown table, the first row its header."""
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    cells = [[_cell(value) for value in row] + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    return "\n".join(lines)


def _cell(value: object) -> str:
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ").strip()


def open_docx(path: Path, name: str) -> Document:
    """A Word document's text in order (headings as #, tables as Markdown tables), in sections."""
    try:
        import docx
    except ImportError as exc:
        raise UnreadableDocument("Word documents cannot be read here: python-docx is not installed.") from exc
    try:
        body = docx.Document(str(path))
        blocks = list(_docx_blocks(body))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors… for a damaged file
        raise UnreadableDocument(f"{name} is damaged or not a Word document ({type(exc).__name__}).") from exc
    return text_document("Word document", "\n\n".join(block for block in blocks if block))


def _docx_blocks(body: Any) -> Iterable[str]:
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for item in body.iter_inner_content():
        if isinstance(item, Paragraph):
            style = (item.style.name if item.style is not None else "") or ""
            level = style.removeprefix("Heading ").strip()
            prefix = "#" * int(level) + " " if style.startswith("Heading ") and level.isdigit() else ""
            yield prefix + item.text
        elif isinstance(item, Table):
            yield markdown_table([[cell.text for cell in row.cells] for row in item.rows])


def open_pptx(path: Path, name: str) -> Document:
    """A presentation: one part per slide, its title, texts, tables and speaker notes."""
    try:
        import pptx
    except ImportError as exc:
        raise UnreadableDocument("PowerPoint files cannot be read here: python-pptx is not installed.") from exc
    try:
        slides = [_slide_text(slide) for slide in pptx.Presentation(str(path)).slides]
    except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml errors… for a damaged file
        raise UnreadableDocument(f"{name} is damaged or not a PowerPoint file ({type(exc).__name__}).") from exc
    return Document(
        "PowerPoint presentation", "slide", [f"slide {n}" for n in range(1, len(slides) + 1)], slides.__getitem__
    )


def _slide_text(slide: Any) -> str:
    lines: list[str] = []
    for shape in slide.shapes:
        if getattr(shape, "has_table", False) and shape.has_table:
            lines.append(markdown_table([[cell.text for cell in row.cells] for row in shape.table.rows]))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame and shape.text_frame.text.strip():
            lines.append(shape.text_frame.text.strip())
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = slide.notes_slide.notes_text_frame.text.strip()
        if notes:
            lines.append(f"Notes: {notes}")
    return "\n\n".join(lines)
