"""Documents the tests make themselves: PDFs by hand and with pypdf, Office files with their own libraries."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path


def pdf_pages(texts: list[str]) -> bytes:
    """A PDF with one page per text, each holding its text in the text layer ("" makes a page with no text)."""
    count = len(texts)
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{4 + 2 * n} 0 R" for n in range(count)).encode()
    objects.append(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for n, text in enumerate(texts):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode() if text else b""
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % (5 + 2 * n)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def locked_pdf(text: str, password: str = "secret") -> bytes:
    """A PDF that needs a password to open."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(pdf_pages([text]))).pages:
        writer.add_page(page)
    writer.encrypt(user_password=password, owner_password=password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_file(path: Path, heading: str, paragraphs: list[str], table: list[list[str]] | None = None) -> Path:
    """A Word document with a heading, paragraphs and optionally a table."""
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for row, values in zip(grid.rows, table, strict=True):
            for cell, value in zip(row.cells, values, strict=True):
                cell.text = value
    document.save(str(path))
    return path


def xlsx_file(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    """A workbook with one sheet per entry, rows of values from A1."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def pptx_file(path: Path, slides: list[tuple[str, str]]) -> Path:
    """A presentation with one title-and-content slide per (title, body)."""
    import pptx

    deck = pptx.Presentation()
    for title, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(str(path))
    return path


def zip_bomb(path: Path, megabytes: int = 40) -> Path:
    """An 'Office file' whose one member inflates from a few KB to `megabytes` MB of zeros."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", b"<Types/>")
        archive.writestr("xl/worksheets/sheet1.xml", b"\0" * (megabytes * 1024 * 1024))
    return path
