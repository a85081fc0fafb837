"""read_document's readers on documents the tests write: every type, long ones in parts, bad ones in one line."""

from pathlib import Path

import pytest

from bot.errors import UnreadableDocument
from bot.files.reading import SHOW_CHARS, open_document, pick, sheet_index, show
from tests.files.samples import docx_file, locked_pdf, pdf_pages, pptx_file, xlsx_file, zip_bomb

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def read(
    path: Path, mime: str = "", pages: str | None = None, sheet: str | None = None, cells: str | None = None
) -> str:
    document = open_document(path, path.name, mime, cells)
    chosen = (
        range(sheet_index(document, sheet), sheet_index(document, sheet) + 1) if sheet else pick(pages, document.count)
    )
    return show(document, path.name, "f_test", chosen)


def test_a_word_document_reads_as_markdown_with_its_heading_and_table(tmp_path: Path) -> None:
    path = docx_file(
        tmp_path / "plan.docx", "Garden plan", ["Plant tomatoes in May."], [["Bed", "Crop"], ["North", "Beans"]]
    )
    text = read(path)
    assert text.startswith("plan.docx: Word document, 1 part")
    assert "# Garden plan" in text and "Plant tomatoes in May." in text
    assert "| Bed | Crop |" in text and "| North | Beans |" in text


def test_a_workbook_lists_its_sheets_and_reads_one_by_name_or_a_range(tmp_path: Path) -> None:
    path = xlsx_file(
        tmp_path / "runs.xlsx",
        {"Runs": [["Day", "Minutes"], ["Mon", 31], ["Tue", 29.5]], "Notes": [["rainy week"]]},
    )
    whole = read(path, XLSX)
    assert "2 sheets: sheet Runs (A1:B3); sheet Notes (A1:A1)" in whole
    assert "| Day | Minutes |" in whole and "| Tue | 29.5 |" in whole and "rainy week" in whole
    notes = read(path, XLSX, sheet="notes")
    assert "rainy week" in notes and "Minutes" not in notes
    cells = read(path, XLSX, sheet="Runs", cells="B2:B3")
    assert "| 31 |" in cells and "Mon" not in cells


def test_a_presentation_reads_slide_by_slide(tmp_path: Path) -> None:
    path = pptx_file(tmp_path / "deck.pptx", [("Q1", "Sales rose"), ("Q2", "Costs fell")])
    assert "--- slide 2 ---\nQ2\n\nCosts fell" in read(path, pages="2")


def test_a_300_page_pdf_is_read_in_parts_with_the_way_on(tmp_path: Path) -> None:
    path = tmp_path / "book.pdf"
    path.write_bytes(pdf_pages([f"Page {n} " + "words " * 300 for n in range(1, 301)]))
    first = read(path)
    assert first.startswith("book.pdf: PDF, 300 pages")
    assert "--- page 1 ---" in first and "--- page 300 ---" not in first
    assert len(first) < SHOW_CHARS + 2000
    assert "read_document(file_id='f_test', pages='7-300') reads on" in first
    assert "Page 250 " in read(path, pages="250")


def test_a_scanned_pdf_says_it_has_no_text_layer(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(pdf_pages(["", ""]))
    assert "scanned PDF" in read(path)


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        ("locked.pdf", lambda p: p.write_bytes(locked_pdf("secret plans")), "locked.pdf is password-protected"),
        ("broken.pdf", lambda p: p.write_bytes(b"%PDF-1.4\nnot really"), "broken.pdf is damaged"),
        ("broken.xlsx", lambda p: p.write_bytes(b"PK\x03\x04 torn"), "broken.xlsx is damaged"),
        ("bomb.xlsx", zip_bomb, "which is how a zip bomb looks"),
        ("tool.exe", lambda p: p.write_bytes(b"MZ\0\0"), "is not a document type read_document knows"),
    ],
)
def test_bad_documents_get_one_clear_line(tmp_path: Path, name: str, make, expected: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / name
    make(path)
    with pytest.raises(UnreadableDocument) as caught:
        read(path)
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_a_workbook_that_opens_but_has_a_damaged_sheet_is_refused_in_one_line(tmp_path: Path) -> None:
    import zipfile

    good = xlsx_file(tmp_path / "good.xlsx", {"Data": [["a", 1]]})
    bad = tmp_path / "bad.xlsx"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(bad, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            target.writestr(item, b"<worksheet><sheetData><row><c" if item.filename.endswith("sheet1.xml") else data)
    with pytest.raises(UnreadableDocument, match="damaged"):
        read(bad, XLSX)


def test_a_file_past_the_size_limit_is_not_opened(tmp_path: Path) -> None:
    path = tmp_path / "huge.pdf"
    with path.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: nothing written
    with pytest.raises(UnreadableDocument, match="huge.pdf is 200.0 MB; documents up to 50 MB can be read"):
        read(path)


def test_html_markdown_and_csv_read_as_text(tmp_path: Path) -> None:
    html = tmp_path / "page.html"
    html.write_text(
        "<html><body><article><h1>Menu</h1><p>Soup of the day is lentil, served hot with bread.</p>"
        "</article></body></html>"
    )
    assert "lentil" in read(html)
    markdown = tmp_path / "notes.md"
    markdown.write_text("# Notes\n\nBuy milk.\n")
    assert "Buy milk." in read(markdown)
    table = tmp_path / "scores.csv"
    table.write_text("name,score\nann,3\nbo,5\n")
    assert "| name | score |\n|---|---|\n| ann | 3 |" in read(table)


def test_a_page_span_outside_the_document_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.pdf"
    path.write_bytes(pdf_pages(["one", "two"]))
    with pytest.raises(UnreadableDocument, match="outside the document: it has 2 parts"):
        read(path, pages="5")
    assert "--- page 2 ---\ntwo" in read(path, pages="2-")
