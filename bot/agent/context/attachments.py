"""Attachments as the model reads them: text-like files and PDFs inlined up to a limit, others as a path."""

from __future__ import annotations

import logging
import mimetypes
from pathlib import Path

from bot.bus import Attachment
from bot.files.records import FileRecord

logger = logging.getLogger(__name__)

TEXT_MIME_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/javascript",
        "application/x-javascript",
        "application/x-sh",
        "application/x-python",
        "application/sql",
        "application/x-ndjson",
    }
)
# Code and config files that mimetypes does not know as text (it reads .ts as video).
CODE_SUFFIXES = frozenset({".ts", ".tsx", ".go", ".rs", ".kt", ".swift", ".toml", ".yaml", ".yml", ".jsonl"})
CODE_SUFFIXES |= {".vue", ".svelte", ".dart", ".lua", ".scala", ".r", ".rb", ".php", ".ini", ".cfg", ".conf", ".log"}


def is_text_like(attachment: Attachment) -> bool:
    """Text, JSON, CSV, Markdown and code, by MIME type or, for platforms that say octet-stream, by file suffix."""
    path = Path(attachment.path)
    if path.suffix.lower() in CODE_SUFFIXES:
        return True
    return any(_is_text_mime(mime) for mime in (attachment.mime_type, mimetypes.guess_type(path.name)[0] or ""))


def _is_text_mime(mime: str) -> bool:
    mime = mime.split(";", 1)[0].strip().lower()
    return mime.startswith("text/") or mime in TEXT_MIME_TYPES


def is_pdf(attachment: Attachment) -> bool:
    """Whether the attachment is a PDF."""
    return attachment.mime_type.lower().startswith("application/pdf") or attachment.path.lower().endswith(".pdf")


def describe_attachment(attachment: Attachment, workspace: Path, limit: int, record: FileRecord | None = None) -> str:
    """The note the model reads for one attachment; text-like files and PDFs carry their text up to `limit`.

    With its `record`, the note names the file by its id, which read_document and run_python take.
    """
    shown = _shown_path(Path(attachment.path), workspace)
    if record is not None:
        shown = f"{record.id} {record.name}"
    if attachment.kind != "file":
        return f"[attached {attachment.kind}: {shown} ({attachment.mime_type})]"
    text = _text_of(attachment, limit)
    if text is None:
        how = "read_document reads documents by file_id" if record else "the owner's file tools can open it"
        return f"[attached file: {shown} ({attachment.mime_type}); {how}]"
    cut = ""
    if len(text) > limit:
        more = f"; read_document(file_id={record.id!r}) reads on in parts" if record else ""
        cut = f"\n[the rest is cut: only the first {limit:,} characters are shown{more}]"
    return f"[attached file {shown} ({attachment.mime_type}), its text follows]\n{text[:limit]}{cut}\n[end of {shown}]"


def _text_of(attachment: Attachment, limit: int) -> str | None:
    """The attachment's text, a little past `limit` at most; None when it is not text or cannot be read."""
    path = Path(attachment.path)
    try:
        if is_pdf(attachment):
            return _pdf_text(path, limit)
        if not is_text_like(attachment):
            return None
        with path.open("rb") as file:
            raw = file.read(limit * 4 + 4)
    except OSError as exc:
        logger.warning("could not read attachment %s: %s", path.name, exc)
        return None
    if b"\0" in raw[:8192]:
        return None
    return raw.decode("utf-8", errors="replace")


def _pdf_text(path: Path, limit: int) -> str | None:
    """The text layer of a PDF through pypdf, pages up to `limit` characters; None when it has none."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        return None
    pages: list[str] = []
    size = 0
    try:
        for page in PdfReader(path).pages:
            pages.append((page.extract_text() or "").strip())
            size += len(pages[-1])
            if size > limit:
                break
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        logger.warning("could not read PDF %s: %s", path.name, exc)
        return None
    text = "\n\n".join(pages).strip()
    return text or None


def _shown_path(path: Path, workspace: Path) -> str:
    """The path as the file tools take it: relative to the workspace when it is inside."""
    try:
        return str(path.resolve().relative_to(workspace.resolve()))
    except ValueError:
        return str(path)
