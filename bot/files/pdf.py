"""PDFs through pypdf: one part per page, read when asked for; locked and damaged files refused in one line."""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from bot.errors import UnreadableDocument
from bot.files.document import Document

logger = logging.getLogger(__name__)

SCANNED = (
    "this looks like a scanned PDF: its pages are pictures with no text layer, so there is no text to read "
    "(it would need OCR)"
)


def open_pdf(path: Path, name: str) -> Document:
    """The PDF's pages; UnreadableDocument when it is password-protected or damaged."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableDocument(f"{name} is password-protected; ask for a copy without a password.")
        pages = reader.pages
        count = len(pages)
    except UnreadableDocument:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, NotImplementedError) as exc:
        raise UnreadableDocument(f"{name} is damaged or not a PDF pypdf can read ({type(exc).__name__}).") from exc

    @functools.lru_cache(maxsize=64)
    def page_text(index: int) -> str:
        try:
            return (pages[index].extract_text() or "").strip()
        except Exception as exc:  # pypdf raises many kinds on odd pages; one bad page must not sink the others
            logger.info("page %d of %s not read: %s: %s", index + 1, name, type(exc).__name__, exc)
            return f"[page {index + 1} could not be read]"

    notes = [SCANNED] if count and not any(page_text(index) for index in range(min(count, 5))) else []
    return Document("PDF", "page", [f"page {n}" for n in range(1, count + 1)], page_text, notes)
