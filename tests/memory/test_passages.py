"""Session messages as passages: who spoke, without the runtime headers or recalled blocks."""

from __future__ import annotations

from bot.memory.index.passages import spoken


def test_the_header_names_the_speaker_and_a_batchs_later_headers_are_left_out() -> None:
    text = (
        "[telegram group -5 · from Ann (7) · 2026-03-02 10:00 Monday]\nThe cake is in the oven\n\n"
        "[telegram group -5 · from Ann (7) · 2026-03-02 10:01 Monday]\nand the candles are in the drawer"
    )
    assert spoken(text) == ("Ann", "The cake is in the oven\n\nand the candles are in the drawer")
    assert spoken("[system message for console DM me · 2026-03-02 10:00 Monday]\nRun the report") == (
        "system",
        "Run the report",
    )
    assert spoken("plain text") == ("user", "plain text")


def test_a_recalled_block_is_never_read_as_what_the_user_said() -> None:
    text = (
        "[From earlier conversations (this chat's memory; may be out of date)]\n2026-01-01 (Thu), Ann: old\n"
        "[end of recalled passages]\n\n[console DM me · from Ann (1) · 2026-03-02 10:00 Monday]\nnew question"
    )
    assert spoken(text) == ("Ann", "new question")
