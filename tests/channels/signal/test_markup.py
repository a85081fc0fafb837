"""Markdown as Signal text styles: marks taken out, styles placed in UTF-16 units."""

from channels.signal.markup import markdown_to_signal


def test_emphasis_becomes_styles_over_the_plain_text() -> None:
    text, styles = markdown_to_signal("A **bold** and *slanted* ~~old~~ word")
    assert text == "A bold and slanted old word"
    assert styles == ["2:4:BOLD", "11:7:ITALIC", "19:3:STRIKETHROUGH"]


def test_code_keeps_its_content_verbatim_in_monospace() -> None:
    text, styles = markdown_to_signal("Run `ls *.py` then:\n```python\nx = a_b_c * 2\n```\ndone")
    assert text == "Run ls *.py then:\nx = a_b_c * 2\ndone"
    assert styles == ["4:7:MONOSPACE", "18:13:MONOSPACE"]


def test_offsets_count_utf16_units_and_nested_styles_are_kept() -> None:
    text, styles = markdown_to_signal("😀 **very *much* so**")
    assert text == "😀 very much so"
    assert sorted(styles) == ["3:12:BOLD", "8:4:ITALIC"]


def test_headings_are_bold_links_read_with_their_address_and_snake_case_stays() -> None:
    text, styles = markdown_to_signal("# Plan\nSee [the docs](https://example.org) for snake_case_names.")
    assert text == "Plan\nSee the docs (https://example.org) for snake_case_names."
    assert styles == ["0:4:BOLD"]
