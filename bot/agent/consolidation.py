"""Consolidation: folding old session messages into a scope's MEMORY.md and HISTORY.md in the background."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.agent.context.budget import ContextBudget
from bot.bus import ChatRef
from bot.errors import BudgetExceeded, ProviderError
from bot.hooks.handlers import Hooks
from bot.hooks.hook_events import AfterCompaction, BeforeCompaction
from bot.llm.tokens import CHARS_PER_TOKEN
from bot.llm.types import LLMResponse, Provider
from bot.memory.files import (
    MEMORY_CAP_CHARS,
    SAVE_MEMORY_INSTRUCTIONS,
    SAVE_MEMORY_TOOL,
    MemoryScope,
    MemoryUpdate,
    follow_up_request,
    parse_update,
)
from bot.memory.locks import ScopeLocks
from bot.memory.pair_write import finish_pair
from bot.memory.review import Reviewed, Source, problems, settle
from bot.sessions.session import Session, Sessions
from bot.usage.charge import Charge, charged_to

logger = logging.getLogger(__name__)

MIN_CHUNK_CHARS = 2000
TOOL_RESULT_CHARS = 300
TOOL_ARGUMENT_CHARS = 200
STOP_GRACE = 10.0


def render_message(message: dict[str, Any]) -> str:
    """One session message as a transcript line for the consolidation prompt; tool output clipped."""
    role = message.get("role")
    text = _content_text(message.get("content"))
    if role == "tool":
        return f"TOOL RESULT ({message.get('name') or 'tool'}): {_clip(text, TOOL_RESULT_CHARS)}"
    if role != "assistant":
        return f"{str(role).upper()}: {text}"
    lines = [f"ASSISTANT: {text}"] if text else []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = _clip(function.get("arguments") or "", TOOL_ARGUMENT_CHARS)
        lines.append(f"ASSISTANT called {function.get('name')}({arguments})")
    return "\n".join(lines)


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        parts = (p for p in content if isinstance(p, dict))
        return " ".join(p.get("text", "") if p.get("type") == "text" else "[image]" for p in parts)
    return content if isinstance(content, str) else ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " […]"


def keep_boundary(messages: list[dict[str, Any]], start: int, keep: int) -> int | None:
    """Where the recent, kept part begins: the first user message in the last `keep`, else the last before them."""
    target = max(start + 1, len(messages) - keep)
    after = (i for i in range(target, len(messages)) if messages[i].get("role") == "user")
    before = (i for i in range(target - 1, start, -1) if messages[i].get("role") == "user")
    return next(after, None) or next(before, None)


def plan_chunk(messages: list[dict[str, Any]], start: int, stop: int, max_chars: int) -> tuple[int, str] | None:
    """The next chunk from `start`: its end (a user message, or `stop`) and transcript, within about `max_chars`."""
    lines: list[str] = []
    size = 0
    best: tuple[int, int] | None = None  # (end index, number of lines)
    for index in range(start, stop + 1):
        if index > start and (index == stop or messages[index].get("role") == "user"):
            if size > max_chars and best is not None:
                break
            best = (index, len(lines))
            if size > max_chars:
                break
        if index == stop:
            break
        line = render_message(messages[index])
        lines.append(line)
        size += len(line) + 1
        if size > max_chars and best is not None:
            break
    if best is None:
        return None
    return best[0], _clip("\n".join(lines[: best[1]]), max_chars)


class MemoryConsolidator:
    """Folds old session messages into memory in background tasks: at most one per session, never blocking a reply."""

    def __init__(
        self,
        provider: Provider,
        sessions: Sessions,
        budget: ContextBudget,
        window: int,
        timezone: str,
        clock: Callable[[], float] = time.time,
        hooks: Hooks | None = None,
        locks: ScopeLocks | None = None,
        folded: Callable[[str, MemoryScope], None] | None = None,
    ) -> None:
        """`folded(session key, scope)` is told each time a chunk of a session went into the scope's memory files."""
        self._hooks = hooks or Hooks()
        self._folded = folded
        self._provider = provider
        self._sessions = sessions
        self._budget = budget
        self._window = window
        self._zone = ZoneInfo(timezone)
        self._clock = clock
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._locks = locks or ScopeLocks()
        # After a failure, wait for a few more messages before asking again: a model that never
        # calls save_memory must not cost an extra request on every turn.
        self._retry_at: dict[int, int] = {}

    def after_turn(self, session: Session, scope: MemoryScope, chat: ChatRef) -> None:
        """Start consolidating `chat`'s session once `window` messages are unconsolidated, unless its task runs."""
        if id(session) in self._tasks or session.total - session.consolidated < self._window:
            return
        if session.total < self._retry_at.get(id(session), 0):
            return
        self._start(session, chat, self._consolidate_backlog(session, scope))

    def archive(self, session: Session, scope: MemoryScope, chat: ChatRef) -> None:
        """Consolidate everything left in a session of `chat` that /new archived, after its running task if any."""
        self._start(session, chat, self._consolidate_rest(session, scope, self._tasks.get(id(session))))

    async def idle(self) -> None:
        """Return once no consolidation is running."""
        while running := [task for task in self._tasks.values() if not task.done()]:
            await asyncio.wait(running)

    async def stop(self) -> None:
        """Let running consolidations finish for a short grace period, then cancel them."""
        running = list(self._tasks.values())
        if not running:
            return
        _, pending = await asyncio.wait(running, timeout=STOP_GRACE)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def _start(self, session: Session, chat: ChatRef, work: Coroutine[Any, Any, None]) -> None:
        key = id(session)
        task = asyncio.create_task(self._supervise(session, chat, work), name=f"memory:{session.key}")
        self._tasks[key] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._tasks.get(key) is done:
                del self._tasks[key]

        task.add_done_callback(forget)

    async def _supervise(self, session: Session, chat: ChatRef, work: Coroutine[Any, Any, None]) -> None:
        before = session.consolidated
        await self._hooks.run("before_compaction", BeforeCompaction(chat, len(session.messages) - before))
        ok = False
        try:
            with charged_to(Charge("consolidation", chat)):
                await work
            ok = True
        except Exception:
            logger.exception("[%s] memory consolidation crashed; it will be retried after a later turn", session.key)
        await self._hooks.run("after_compaction", AfterCompaction(chat, session.consolidated - before, ok))

    async def _consolidate_backlog(self, session: Session, scope: MemoryScope) -> None:
        await self._sessions.load_unconsolidated(session)
        base = session.base
        boundary = keep_boundary(session.messages, session.consolidated - base, self._window // 2)
        stop = None if boundary is None else boundary + base
        while stop is not None and session.consolidated < stop:
            if not await self._round(session, scope, stop):
                self._retry_at[id(session)] = session.total + max(2, self._window // 4)
                return
        self._retry_at.pop(id(session), None)

    async def _consolidate_rest(self, session: Session, scope: MemoryScope, prior: asyncio.Task[None] | None) -> None:
        if prior is not None:
            await asyncio.wait([prior])
        await self._sessions.load_unconsolidated(session)
        while session.consolidated < session.total:
            if not await self._round(session, scope, session.total):
                logger.warning("[%s] archived session only partly consolidated", session.key)
                return

    async def _round(self, session: Session, scope: MemoryScope, stop: int) -> bool:
        """Consolidate the next chunk before `stop`; True when the offset advanced (here or on another worker)."""
        async with self._locks.hold(scope) as held:  # scopes are shared (owner DMs, the console, workers)
            if not held:
                return False
            self._sessions.sync_consolidated(session)  # another worker may have consolidated meanwhile
            if session.consolidated >= stop:
                return True
            start = session.consolidated
            await asyncio.to_thread(finish_pair, scope.directory)  # a change a kill cut short: done or undone
            current = scope.read_memory()
            limit = await self._budget.input_limit([SAVE_MEMORY_TOOL])
            room = max(MIN_CHUNK_CHARS, limit * CHARS_PER_TOKEN - len(SAVE_MEMORY_INSTRUCTIONS) - len(current) - 200)
            base = session.base  # messages before it may be dropped from memory, never unconsolidated ones
            chunk = plan_chunk(session.messages, start - base, stop - base, room)
            if chunk is None:
                return False
            end, transcript = chunk[0] + base, chunk[1]
            stamp = datetime.fromtimestamp(self._clock(), self._zone)
            source = Source(session.key, f"{stamp:%Y-%m-%d}")
            update = await self._ask(session.key, current, transcript, source)
            if update is None:
                return False
            if scope.read_memory() != current:
                logger.info("[%s] MEMORY.md changed during consolidation; trying again later", session.key)
                return False
            await self._write(session.key, scope, current, settle(update, current, source), f"{stamp:%Y-%m-%d %H:%M}")
            self._sessions.mark_consolidated(session, end)
            logger.info("[%s] consolidated messages %d-%d into %s", session.key, start, end, scope.directory)
            if self._folded is not None:
                self._folded(session.key, scope)
            return True

    async def _write(self, key: str, scope: MemoryScope, current: str, reviewed: Reviewed, stamp: str) -> None:
        """Append the history entry and replace MEMORY.md, as one change; facts moved out for the cap go to
        HISTORY.md, logged."""
        update = reviewed.update
        if reviewed.removed:
            logger.warning("[%s] memory update: %d injection or secret parts left out", key, reviewed.removed)
        entries = [f"[{stamp}] {update.history_entry}"]
        if reviewed.moved:
            logger.warning(
                "[%s] MEMORY.md over %d characters: %d oldest facts moved to HISTORY.md",
                key,
                MEMORY_CAP_CHARS,
                len(reviewed.moved),
            )
            entries.append(f"[{stamp}] Facts moved out of MEMORY.md: {' | '.join(reviewed.moved)}")
        changed = update.memory is not None and update.memory != current.strip()
        await asyncio.to_thread(scope.record, entries, update.memory + "\n" if changed and update.memory else None)

    async def _ask(self, key: str, current: str, transcript: str, source: Source) -> MemoryUpdate | None:
        """Ask the model for an update; one that cannot be saved as it is goes back once, saying why."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SAVE_MEMORY_INSTRUCTIONS},
            {
                "role": "user",
                "content": f"## Current MEMORY.md\n\n{current.strip() or '(empty)'}\n\n"
                f"## Conversation excerpt (chat {source.chat}, {source.day})\n\n{transcript}",
            },
        ]
        first = await self._request(key, messages)
        if first is None:
            return None
        update, response = first
        wrong = problems(update, current, source)
        if not wrong:
            return update
        messages.extend(follow_up_request(response, wrong))
        second = await self._request(key, messages)
        if second is None:
            return update
        if rest := problems(second[0], current, source):
            logger.info("[%s] memory update still needs fixing after one retry: %s", key, "; ".join(rest))
        return second[0]

    async def _request(self, key: str, messages: list[dict[str, Any]]) -> tuple[MemoryUpdate, LLMResponse] | None:
        try:
            response = await self._provider.chat(messages, [SAVE_MEMORY_TOOL])
        except BudgetExceeded:
            logger.debug("[%s] memory consolidation paused by the background budget", key)
            return None
        except ProviderError as exc:
            logger.warning("[%s] memory consolidation failed (%s); trying again later", key, type(exc).__name__)
            return None
        update = parse_update(response)
        if update is None:
            logger.warning("[%s] memory consolidation got no usable save_memory call; trying again later", key)
            return None
        return update, response
