"""Ignore notices: each ignored sender logged once, among a bounded number remembered."""

from __future__ import annotations

from bot.access.notices import NoticesInProcess


def test_a_sender_is_noticed_once() -> None:
    seen = NoticesInProcess()
    assert seen.first("telegram", "7")
    assert not seen.first("telegram", "7")
    assert seen.first("discord", "7")


def test_the_sender_noticed_least_lately_is_forgotten_beyond_the_bound() -> None:
    seen = NoticesInProcess(remembered=3)
    for sender in "abcd":
        seen.first("telegram", sender)
    assert not seen.first("telegram", "d")
    assert seen.first("telegram", "a")  # forgotten, so noticed again
