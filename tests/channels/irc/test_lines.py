"""Replies as IRC lines: prose reflowed and wrapped at words, code kept line by line, every line within budget."""

import pytest

from channels.irc.lines import BOLD, ITALIC, irc_lines, prefix_bytes


def test_prose_is_reflowed_as_markdown_reads_it_and_paragraphs_stay_apart() -> None:
    text = "Your code is ABC.\nAsk the owner to approve it.\n\nA second paragraph."
    assert irc_lines(text, 400) == ["Your code is ABC. Ask the owner to approve it.", "A second paragraph."]


def test_list_items_and_numbered_choices_keep_their_own_lines() -> None:
    text = "Run `ls`?\n1. Allow once\n2. Deny\n- a point\n- another"
    assert irc_lines(text, 400) == ["Run `ls`?", "1. Allow once", "2. Deny", "- a point", "- another"]


def test_long_prose_wraps_at_words_within_the_budget() -> None:
    words = [f"word{i}" for i in range(200)]
    lines = irc_lines(" ".join(words), 100)
    assert len(lines) > 5 and all(len(line.encode()) <= 100 for line in lines)
    assert " ".join(lines).split(" ") == words  # no word broken, none lost


def test_code_lines_stay_whole_with_their_indentation_and_fences_go() -> None:
    text = "Look:\n```python\ndef f():\n\treturn 1\n\nx = f()\n```\nDone."
    assert irc_lines(text, 400) == ["Look:", "def f():", "    return 1", " ", "x = f()", "Done."]


def test_a_word_longer_than_the_budget_is_cut_at_a_character_boundary() -> None:
    lines = irc_lines("ü" * 100, 31)
    assert all(len(line.encode()) <= 31 for line in lines) and "".join(lines) == "ü" * 100


def test_markdown_emphasis_headings_and_links_become_irc_formatting() -> None:
    text = "# Title\n\n**bold** and *it* and [docs](https://example.org)"
    assert irc_lines(text, 400) == [
        f"{BOLD}Title{BOLD}",
        f"{BOLD}bold{BOLD} and {ITALIC}it{ITALIC} and docs <https://example.org>",
    ]


def test_the_prefix_counts_against_the_512_bytes() -> None:
    assert prefix_bytes("bot", "~bot", "host", "#room") == len(":bot!~bot@host PRIVMSG #room :\r\n")


def test_a_budget_too_small_for_any_text_is_refused() -> None:
    with pytest.raises(ValueError):
        irc_lines("hello", 4)
