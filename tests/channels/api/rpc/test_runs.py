"""The run book on its own: a worker's reply that overtakes its turn's end waits for it, or ends the run alone."""

from __future__ import annotations

import asyncio

from bot.bus import ChatRef, OutboundMessage
from bot.events import TurnFinished, TurnStarted
from channels.api.frames import Frame
from channels.api.rpc.runs import Run, RunBook

CHAT = ChatRef("api", "me", "default")


def reply_to(turn: str, text: str) -> OutboundMessage:
    return OutboundMessage(CHAT, text, in_reply_to=turn, id=f"{turn}:reply")


def phases(frames: list[tuple[Run, Frame]]) -> list[str]:
    return [frame["data"].get("phase") or next(iter(frame["data"])) for _, frame in frames]


async def test_a_reply_ahead_of_its_turns_end_waits_for_it() -> None:
    book = RunBook()
    run = book.add("r1", "me", CHAT.session_key)
    book.observe(TurnStarted(CHAT, "r1", ("r1",)))
    assert book.replied(reply_to("r1", "done")) == []
    assert not run.done.is_set()
    ended = book.observe(TurnFinished(CHAT, "r1", "answered", 1, 0.1))
    assert phases(ended) == ["text", "end"] and run.status == "ok" and run.reply == "done"


async def test_a_held_reply_ends_its_run_alone_when_the_turns_end_never_comes() -> None:
    emitted: list[tuple[Run, Frame]] = []
    book = RunBook(emit=emitted.extend, hold=0.01)
    run = book.add("r1", "me", CHAT.session_key)
    book.observe(TurnStarted(CHAT, "r1", ("r1",)))
    assert book.replied(reply_to("r1", "done")) == []
    await asyncio.wait_for(run.done.wait(), 5)
    assert phases(emitted) == ["text", "end"] and run.status == "ok"
    assert book.observe(TurnFinished(CHAT, "r1", "answered", 1, 0.1)) == []  # late: the run has ended


def test_an_adopted_run_ends_with_its_turn_and_only_owners_find_it() -> None:
    book = RunBook()
    elsewhere = ChatRef("trigger", "github")
    run = book.add("trigger-github-1", "trigger:github", elsewhere.session_key, adopted=True)
    assert book.find("me", run.id) is None and book.find("me", run.id, is_owner=True) is run
    started = book.observe(TurnStarted(elsewhere, run.id, (run.id,)))
    ended = book.observe(TurnFinished(elsewhere, run.id, "answered", 1, 0.1, text="PR 7 looks fine"))
    assert phases(started + ended) == ["start", "text", "end"]
    assert run.status == "ok" and run.reply == "PR 7 looks fine" and run.done.is_set()
