"""A session's lane: its queue and running turn, and how queued messages join turns (collect, followup, steer)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.bus import TRUST_ORDER, InboundMessage, Trust
from bot.commands.parse import parse_command


@dataclass
class Lane:
    """The queue and running turn of one session."""

    pending: deque[InboundMessage] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    turn: asyncio.Task[None] | None = None  # the worker, while it runs a turn
    stopped: bool = False
    running: frozenset[str] = frozenset()  # platform ids of the running turn's messages, which edits may name
    edits: list[InboundMessage] = field(default_factory=list)  # edits of those, waiting to steer the turn

    def stop(self) -> list[str]:
        """Drop the queued messages and cancel the running turn (as stopped by the user); the dropped ids."""
        dropped = [message.id for message in (*self.pending, *self.edits)]
        self.pending.clear()
        self.edits.clear()
        if self.turn is not None:
            self.stopped = True
            self.turn.cancel()
        return dropped


def next_batch(pending: deque[InboundMessage], queue_mode: str) -> list[InboundMessage]:
    """One message, or in collect mode every queued message up to the next command."""
    if not pending:
        return []
    batch = [pending.popleft()]
    if queue_mode == "collect" and not is_new_session(batch[0]):
        while pending and not is_new_session(pending[0]):
            batch.append(pending.popleft())
    return batch


def steering(
    lane: Lane,
    trust: Trust,
    ids: list[str],
    user_text: Callable[[InboundMessage], str],
    queued: bool,
    edited: Callable[[InboundMessage], str],
) -> Callable[[], list[str]]:
    """Takes edits of the running turn's messages, and (steer mode, `queued`) the messages queued behind it.

    Their ids join `ids`. Only messages as trusted as the turn join it, so the turn still acts with its
    messages' lowest trust; a less trusted one, or /new, waits for the next turn.
    """

    def take() -> list[str]:
        taken: list[str] = []
        waiting = [edit for edit in lane.edits if edit.trust.rank < trust.rank]  # they wait for the turn's end
        for edit in lane.edits:
            if edit not in waiting:
                ids.append(edit.id)
                taken.append(edited(edit))
        lane.edits[:] = waiting
        while queued and lane.pending and may_join(lane.pending[0], trust):
            message = lane.pending.popleft()
            ids.append(message.id)  # answered by this turn's reply, so completed with it
            taken.append(user_text(message))
        return taken

    return take


def may_join(message: InboundMessage, trust: Trust) -> bool:
    """Whether a queued message may be steered into a running turn of this trust."""
    more_trusted = TRUST_ORDER.index(message.trust) >= TRUST_ORDER.index(trust)
    return message.kind == "user" and not is_new_session(message) and more_trusted


def is_new_session(message: InboundMessage) -> bool:
    """Whether a message switches the live session (/new, /reset, /resume N): it never merges with others."""
    command = parse_command(message.text) if message.kind == "user" else None
    return command is not None and command.answered == "lane"
