"""Evidence coverage as MEMORY_EVAL.md defines it."""

from locomo.coverage import Covering, coverage, words


def test_words_are_lower_cased_letters_and_digits() -> None:
    assert words("Hey Mel! It's 2023, isn't it?") == ["hey", "mel", "it", "s", "2023", "isn", "t", "it"]


def test_a_line_is_covered_by_any_six_consecutive_words() -> None:
    line = "I went to a LGBTQ support group yesterday and it was so powerful."
    assert Covering("...and it was so powerful. Really!").covers(line) is False  # five words only
    assert Covering("NOTE: Yesterday, and it was so POWERFUL").covers(line)


def test_a_short_line_is_covered_only_whole_and_in_order() -> None:
    covering = Covering("Caroline: Thanks, Mel! See you soon.")
    assert covering.covers("thanks mel")
    assert not covering.covers("mel thanks")
    assert not covering.covers("thanks, melanie")  # words, not prefixes of words


def test_share_counts_covered_lines() -> None:
    text = "one two three four five six seven"
    assert coverage(text, ["one two three four five six", "eight nine", "seven"]) == 2 / 3
    assert coverage(text, []) == 0.0
