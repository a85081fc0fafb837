from bot.memory.facts import fact_day, fit_under, with_provenance


def test_new_facts_get_their_source_and_old_ones_keep_theirs() -> None:
    old = "# Memory\n\n- Likes tea (from console:me, 2026-10-01)\n- Has a cat"
    new = "# Memory\n\n- Likes tea (from console:me, 2026-10-01)\n- Has a cat\n- Moved to Porto\n\n## Work"
    assert with_provenance(old, new, "telegram:42", "2026-11-28") == (
        "# Memory\n\n- Likes tea (from console:me, 2026-10-01)\n- Has a cat\n"
        "- Moved to Porto (from telegram:42, 2026-11-28)\n\n## Work"
    )


def test_a_fact_the_model_sourced_itself_is_left_as_it_is() -> None:
    new = "- Runs on Sundays (from slack:T1/C2, 2026-11-27)"
    assert with_provenance("", new, "telegram:42", "2026-11-28") == new
    assert fact_day(new) == "2026-11-27"


def test_fitting_under_the_cap_moves_out_undated_then_oldest_facts() -> None:
    text = "\n".join(
        [
            "# Memory",
            "- new fact (from a:1, 2026-11-20)",
            "- undated fact",
            "- old fact (from a:1, 2026-01-05)",
            "- middle fact (from a:1, 2026-06-01)",
        ]
    )
    kept, moved = fit_under(text, len(text) - 40)
    assert moved == ["- undated fact", "- old fact (from a:1, 2026-01-05)"]
    assert kept == "# Memory\n- new fact (from a:1, 2026-11-20)\n- middle fact (from a:1, 2026-06-01)"
    assert len(kept) <= len(text) - 40


def test_text_under_the_cap_is_untouched() -> None:
    assert fit_under("- one\n- two", 100) == ("- one\n- two", [])


def test_the_cap_holds_even_when_only_headings_are_left() -> None:
    kept, moved = fit_under("# A very long heading\n# Another heading\n- fact", 10)
    assert len(kept) <= 10
    assert "- fact" in moved
