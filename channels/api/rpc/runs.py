"""Runs started over the API: accepted at once, waited for without being stopped, watched as three event streams."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.bus import OutboundMessage
from bot.bus.dead_letters import apology_id
from bot.events import (
    Event,
    LLMCalled,
    ReasoningDelta,
    ReplyDropped,
    StreamDelta,
    StreamEnded,
    ToolCalled,
    ToolFinished,
    ToolUpdated,
    TurnFinished,
    TurnStarted,
)
from bot.storage.recent import RecentMap
from channels.api.frames import Frame

KEEP_RUNS = 1000
"""Runs (and idempotency keys) remembered per gateway; the oldest are forgotten first."""
OK_OUTCOMES = frozenset({"answered", "silent", "answered by message", "iteration limit"})
Stream = Literal["lifecycle", "assistant", "tool"]
HOLD_REPLY = 5.0
"""Seconds a worker's reply that overtook its turn's end waits for it before ending the run by itself."""


def run_topic(run_id: str) -> str:
    """The hub key a run's event frames are emitted under."""
    return f"run:{run_id}"


@dataclass(slots=True)
class Run:
    """One run the API started: a turn, or a command answered at once; times are epoch milliseconds."""

    id: str
    owner: str
    session_key: str
    accepted_at: int
    started_at: int | None = None
    ended_at: int | None = None
    status: Literal["ok", "error"] | None = None
    error: str | None = None
    reply: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None  # the model's, of the run's last call
    adopted: bool = False  # started elsewhere (a trigger): any owner may watch it; its reply goes to another chat
    seq: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def outcome(self, status: str | None = None) -> dict[str, Any]:
        """What `agent.wait` answers: status, start and end times, the error and the reply when there are."""
        result: dict[str, Any] = {
            "runId": self.id,
            "status": status or self.status,
            "startedAt": self.started_at,
            "endedAt": self.ended_at,
        }
        if self.error is not None:
            result["error"] = self.error
        if self.reply is not None and status is None:
            result["reply"] = self.reply
        if status is None:
            result["usage"] = {"promptTokens": self.prompt_tokens, "completionTokens": self.completion_tokens}
        return result

    def ending(self) -> dict[str, Any]:
        """The data of the run's last lifecycle event: `end`, or `error` with the error."""
        data: dict[str, Any] = {"phase": "end" if self.status == "ok" else "error", "endedAt": self.ended_at}
        if self.error is not None:
            data["error"] = self.error
        return data

    def frame(self, stream: Stream, data: dict[str, Any]) -> Frame:
        """The next event frame of this run, numbered in order."""
        self.seq += 1
        return {"type": "agent", "runId": self.id, "stream": stream, "seq": self.seq, "data": data}


class RunBook:
    """Keeps the runs the API started and turns the agent's events and replies into their event frames."""

    def __init__(
        self,
        show_reasoning: bool = False,
        clock: Callable[[], float] = time.time,
        emit: Callable[[list[tuple[Run, Frame]]], None] = lambda frames: None,
        hold: float = HOLD_REPLY,
    ) -> None:
        """`emit` sends the frames of a held reply that ends its runs later, by itself."""
        self._show_reasoning = show_reasoning
        self._clock = clock
        self._emit = emit
        self._hold = hold
        self._held: dict[str, tuple[OutboundMessage, asyncio.TimerHandle]] = {}
        self._runs: RecentMap[str, Run] = RecentMap(KEEP_RUNS)
        self._keys: RecentMap[tuple[str, str], str] = RecentMap(KEEP_RUNS)
        self._turns: dict[str, list[Run]] = {}

    def _now(self) -> int:
        return int(self._clock() * 1000)

    def find(self, owner: str, run_id: str, is_owner: bool = False) -> Run | None:
        """The run `owner` started under this id (an owner also finds adopted runs); another token's is never found."""
        run = self._runs.get(run_id)
        return run if run is not None and (run.owner == owner or (is_owner and run.adopted)) else None

    def known(self, owner: str, idempotency_key: str | None) -> Run | None:
        """The run an idempotency key already started for `owner`, if it is still remembered."""
        run_id = self._keys.get((owner, idempotency_key)) if idempotency_key else None
        return self.find(owner, run_id) if run_id else None

    def add(
        self, run_id: str, owner: str, session_key: str, idempotency_key: str | None = None, adopted: bool = False
    ) -> Run:
        """Remember a run about to be published, so none of its events is missed."""
        run = Run(run_id, owner, session_key, self._now(), adopted=adopted)
        self._runs[run_id] = run
        if idempotency_key:
            self._keys[(owner, idempotency_key)] = run_id
        return run

    async def wait(self, run: Run, timeout: float) -> dict[str, Any]:
        """The run's outcome once it ended, else a `timeout` status after `timeout` seconds; the run goes on."""
        try:
            async with asyncio.timeout(timeout):
                await run.done.wait()
        except TimeoutError:
            return run.outcome("timeout")
        return run.outcome()

    def observe(self, event: Event) -> list[tuple[Run, Frame]]:
        """The run frames an agent event becomes; a turn's start and end also move its runs along."""
        if isinstance(event, TurnStarted):
            return self._started(event)
        runs = self._turns.get(getattr(event, "turn_id", ""), [])
        match event:
            case StreamDelta(text=text):
                return [(run, run.frame("assistant", {"delta": text})) for run in runs]
            case ReasoningDelta(text=text) if self._show_reasoning:
                return [(run, run.frame("assistant", {"reasoning": text})) for run in runs]
            case ToolCalled(tool=name, call_id=call_id, summary=summary):
                began = {"phase": "start", "name": name, "callId": call_id, "args": summary}
                return [(run, run.frame("tool", began)) for run in runs]
            case ToolUpdated(tool=name, call_id=call_id, text=text):
                update = {"phase": "update", "name": name, "callId": call_id, "partial": text}
                return [(run, run.frame("tool", update)) for run in runs]
            case ToolFinished(tool=name, call_id=call_id, summary=summary):
                ended = {"phase": "end", "name": name, "callId": call_id, "ok": event.ok, "result": summary}
                return [(run, run.frame("tool", ended | {"durationMs": int(event.duration * 1000)})) for run in runs]
            case TurnFinished():
                return self._finished(event)
            case ReplyDropped():
                return self._dropped(event)
            case LLMCalled() | StreamEnded():
                self._account(runs, event)
        return []

    def replied(self, message: OutboundMessage) -> list[tuple[Run, Frame]]:
        """The final reply of a turn (or a command's answer) ends its runs: the whole text, then the lifecycle end.

        From a worker the reply can overtake its turn's last events: it then waits for the turn's end, or HOLD_REPLY.
        """
        turn = message.in_reply_to
        if turn is None or message.id not in (f"{turn}:reply", apology_id(turn)):  # a failed turn ends in its apology
            return []
        runs = self._turns.get(turn)
        if runs and all(run.status is None for run in runs) and turn not in self._held:
            self._held[turn] = (message, asyncio.get_running_loop().call_later(self._hold, self._release, turn))
            return []
        return self._reply(message)

    def _release(self, turn: str) -> None:
        """A held reply's turn end never came: the reply ends its runs by itself."""
        held = self._held.pop(turn, None)
        if held is not None:
            self._emit(self._reply(held[0]))

    def _reply(self, message: OutboundMessage) -> list[tuple[Run, Frame]]:
        assert message.in_reply_to is not None
        if (held := self._held.pop(message.in_reply_to, None)) is not None:
            held[1].cancel()
        frames: list[tuple[Run, Frame]] = []
        for run in self._ending(message.in_reply_to):
            run.reply = message.text
            if run.status is None:  # a command or notice; or, from a worker, a reply ahead of its turn's end
                run.started_at = run.started_at or self._now()
                run.ended_at = self._now()
                run.status, run.error = ("error", message.text) if message.kind == "error" else ("ok", None)
            frames.append((run, run.frame("assistant", {"text": message.text})))
            frames.append(self._end(run))
        return frames

    def _dropped(self, event: ReplyDropped) -> list[tuple[Run, Frame]]:
        """A reply a `message_sending` hook blocked ends its runs with an error saying so."""
        frames: list[tuple[Run, Frame]] = []
        for run in self._ending(event.turn_id):
            run.started_at = run.started_at or self._now()
            run.ended_at = self._now()
            run.status, run.error = "error", f"reply blocked by a plugin: {event.reason}"
            frames.append(self._end(run))
        return frames

    def _ending(self, turn: str) -> list[Run]:
        """The runs a turn's reply (or its dropping) ends: those of the turn, or the run of that id not yet ended."""
        return self._turns.pop(turn, None) or [run for run in (self._runs.get(turn),) if run and not run.done.is_set()]

    def _started(self, event: TurnStarted) -> list[tuple[Run, Frame]]:
        ids = event.message_ids or (event.turn_id,)
        runs = [run for i in ids if (run := self._runs.get(i)) is not None and not run.done.is_set()]
        if not runs:
            return []
        self._turns[event.turn_id] = runs
        now = self._now()
        for run in runs:
            run.started_at = now
        return [(run, run.frame("lifecycle", {"phase": "start", "startedAt": now})) for run in runs]

    def _account(self, runs: list[Run], event: LLMCalled | StreamEnded) -> None:
        """A model call's tokens, and the reason it stopped, count for the runs of its turn."""
        for run in runs:
            if isinstance(event, StreamEnded):
                run.finish_reason = event.finish_reason
            else:
                run.prompt_tokens += event.prompt_tokens
                run.completion_tokens += event.completion_tokens

    def _finished(self, event: TurnFinished) -> list[tuple[Run, Frame]]:
        runs = [run for run in self._turns.get(event.turn_id, []) if not run.done.is_set()]
        now = self._now()
        for run in runs:
            run.ended_at = now
            run.status = "ok" if event.outcome in OK_OUTCOMES else "error"
            run.error = None if run.status == "ok" else event.outcome
        if event.replied and not all(run.adopted for run in runs):
            held = self._held.get(event.turn_id)
            return self._reply(held[0]) if held else []  # the reply ends them
        if event.replied:  # an adopted run's reply goes to another chat: the turn's end carries its text
            self._turns.pop(event.turn_id, None)
            return [frame for run in runs for frame in self._told(run, event.text)]
        self._turns.pop(event.turn_id, None)
        return [self._end(run) for run in runs]

    def _told(self, run: Run, text: str) -> list[tuple[Run, Frame]]:
        """An adopted run's reply as its last assistant frame, then its end."""
        run.reply = text
        return [(run, run.frame("assistant", {"text": text})), self._end(run)]

    def _end(self, run: Run) -> tuple[Run, Frame]:
        run.done.set()
        return run, run.frame("lifecycle", run.ending())
