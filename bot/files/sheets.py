"""Spreadsheets: Excel workbooks through openpyxl (one part per sheet, a cell range on request) and CSV files."""

from __future__ import annotations

import csv
import io
from itertools import islice
from pathlib import Path
from typing import Any

from bot.errors import UnreadableDocument
from bot.files.document import Document
from bot.files.office import markdown_table

MAX_ROWS = 200  # rows of a sheet shown at once; a range reads others
MAX_COLUMNS = 40


def open_xlsx(path: Path, name: str, cells: str | None = None) -> Document:
    """A workbook's sheets as Markdown tables (values, not formulas); `cells` (`A1:D20`) limits every sheet read."""
    try:
        import openpyxl
        from openpyxl.utils.cell import range_boundaries
    except ImportError as exc:
        raise UnreadableDocument("Excel files cannot be read here: openpyxl is not installed.") from exc
    bounds: dict[str, Any] = {}
    if cells:
        try:
            min_col, min_row, max_col, max_row = range_boundaries(cells.upper())
        except ValueError as exc:
            raise UnreadableDocument(f"{cells!r} is not a cell range; use one such as A1:D20.") from exc
        bounds = {"min_col": min_col, "min_row": min_row, "max_col": max_col, "max_row": max_row}
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        sheets = [book[title] for title in book.sheetnames]
    except Exception as exc:  # openpyxl raises KeyError, ValueError, InvalidFileException… for a damaged file
        raise UnreadableDocument(f"{name} is damaged or not an Excel workbook ({type(exc).__name__}).") from exc

    def sheet_text(index: int) -> str:
        sheet = sheets[index]
        try:
            rows = [list(row) for row in islice(sheet.iter_rows(values_only=True, **bounds), MAX_ROWS + 1)]
        except Exception as exc:  # a damaged sheet inside a readable workbook
            raise UnreadableDocument(f"sheet {sheet.title!r} of {name} is damaged ({type(exc).__name__}).") from exc
        return _table(rows, f"the sheet has more rows; read_document with a range such as A{MAX_ROWS + 1}:Z400")

    labels = [f"sheet {sheet.title} ({_dimensions(sheet)})" for sheet in sheets]
    return Document("Excel workbook", "sheet", labels, sheet_text)


def _dimensions(sheet: Any) -> str:
    try:
        return str(sheet.calculate_dimension())
    except Exception:  # openpyxl cannot tell for sheets without a stored size
        return "size unknown"


def open_csv(path: Path, name: str) -> Document:
    """A CSV file as one table (its first MAX_ROWS rows)."""
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        sample = handle.read(64 * 1024)
        handle.seek(0)
        try:
            dialect: Any = csv.Sniffer().sniff(sample) if sample.strip() else csv.excel
        except csv.Error:
            dialect = csv.excel
        rows = list(islice(csv.reader(handle, dialect), MAX_ROWS + 1))
    total = _count_lines(path)
    text = _table(rows, f"the file has {total:,} lines; run_python can read it whole if it is offered")
    return Document("CSV file", "part", ["table"], [text].__getitem__)


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(io.DEFAULT_BUFFER_SIZE * 64), b""))


def _table(rows: list[list[Any]], more: str) -> str:
    """Rows as a Markdown table, trailing empty rows dropped, with a note when more rows were left out."""
    cut = len(rows) > MAX_ROWS
    rows = [[_shown(value) for value in row[:MAX_COLUMNS]] for row in rows[:MAX_ROWS]]
    while rows and not any(rows[-1]):
        rows.pop()
    if not rows:
        return "(no cells with values)"
    return markdown_table(rows) + (f"\n[only the first {MAX_ROWS} rows are shown; {more}]" if cut else "")


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
