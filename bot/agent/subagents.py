"""Background sub-agents: a task runs on its own, and its result comes back to the chat that asked."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from bot.agent.turn.runner import TurnRunner
from bot.bus import ChatRef, InboundMessage
from bot.bus.contract import Inbox
from bot.errors import ProviderError
from bot.events import EventBus, SubagentCompleted, SubagentSpawned
from bot.llm.types import Provider
from bot.sessions.session import Sessions
from bot.tools.base import ToolContext, ToolRegistry
from bot.usage.charge import charged_to, current_charge

logger = logging.getLogger(__name__)

SUBAGENT_ITERATIONS = 15
EXCLUDED_TOOLS = frozenset({"message", "spawn", "cron", "ask_user", "send_file", "generate_image"})
"""Tools that reach the chat or start more background work: a sub-agent works alone and only reports back."""
SUBAGENT_PROMPT = (
    "You are a background sub-agent of relaybot. You work alone on one task for the main agent, "
    "who will relay your result to the user. Use your tools as needed, do not ask questions, and "
    "finish with a concise, complete answer: what you found or did, and anything left open. "
    "Current time: {now}."
)


@dataclass
class _Running:
    """One sub-agent and the session that asked for it."""

    id: str
    label: str
    origin_key: str
    task: asyncio.Task[None] | None = field(default=None, repr=False)


PersonaTools = Callable[[str], tuple[Provider, ToolRegistry]]
"""A persona's name -> the provider (its model) and the registry (its tool subset) it speaks with."""


class SubagentManager:
    """Starts sub-agents (at most `max_running` at once), reports their results, cancels them on /stop.

    A sub-agent spawned by a persona's turn works with that persona's model and tool subset, never more.
    """

    def __init__(
        self,
        provider: Provider,
        registry: ToolRegistry,
        events: EventBus,
        sessions: Sessions,
        bus: Inbox,
        max_running: int,
        timeout: float = 900.0,
        persona_tools: PersonaTools | None = None,
    ) -> None:
        self._provider = provider
        self._registry = registry
        self._persona_tools = persona_tools
        self._events = events
        self._sessions = sessions
        self._bus = bus
        self._slots = asyncio.Semaphore(max_running)
        self._timeout = timeout
        self._running: dict[str, _Running] = {}

    def spawn(self, task: str, label: str, origin: ToolContext) -> str:
        """Start a sub-agent for `task`; its result arrives in the origin chat as a system message."""
        agent = _Running(uuid.uuid4().hex[:8], label, origin.session_key)
        agent.task = asyncio.create_task(self._run(agent, task, origin), name=f"subagent:{agent.id}")
        self._running[agent.id] = agent
        agent.task.add_done_callback(lambda _: self._running.pop(agent.id, None))
        logger.info("[%s] sub-agent %s (%s) started", origin.session_key, agent.id, label)
        self._events.emit(SubagentSpawned(origin.chat, agent.id, label))
        return agent.id

    def cancel_for(self, session_key: str) -> int:
        """Cancel every sub-agent started from a session; return how many."""
        doomed = [a for a in self._running.values() if a.origin_key == session_key and a.task]
        for agent in doomed:
            assert agent.task is not None
            agent.task.cancel()
        return len(doomed)

    def running(self, session_key: str) -> int:
        """How many sub-agents a session has running or queued."""
        return sum(1 for a in self._running.values() if a.origin_key == session_key)

    async def stop(self) -> None:
        """Cancel every sub-agent and wait for them."""
        tasks = [a.task for a in self._running.values() if a.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, agent: _Running, task: str, origin: ToolContext) -> None:
        try:
            async with self._slots:
                async with asyncio.timeout(self._timeout):
                    status, body = "finished", await self._work(agent, task, origin)
        except asyncio.CancelledError:
            logger.info("[%s] sub-agent %s cancelled", origin.session_key, agent.id)
            self._events.emit(SubagentCompleted(origin.chat, agent.id, agent.label, "cancelled"))
            raise
        except TimeoutError:
            status, body = "timed out", f"No result within {self._timeout:.0f}s."
        except ProviderError as exc:
            status, body = "failed", f"The language model was unavailable ({type(exc).__name__})."
        except Exception:
            logger.exception("[%s] sub-agent %s crashed", origin.session_key, agent.id)
            status, body = "failed", "It stopped on an internal error."
        logger.info("[%s] sub-agent %s %s", origin.session_key, agent.id, status)
        self._events.emit(SubagentCompleted(origin.chat, agent.id, agent.label, status))
        await self._bus.publish_inbound(
            InboundMessage(
                origin.chat,
                sender_id="subagent",
                text=f"[background task {agent.id} '{agent.label}' {status}]\n{body}\n\n"
                "Report this to the user in your own words.",
                trust=origin.trust,
                is_direct=origin.is_direct,
                kind="system",
                origin="subagent",
                charge_to=current_charge().sender,
            )
        )

    async def _work(self, agent: _Running, task: str, origin: ToolContext) -> str:
        chat = ChatRef("subagent", agent.id)  # the sub-agent's own session, charged and hooked as its chat
        session = self._sessions.get(chat.session_key)
        messages = [
            {
                "role": "system",
                "content": SUBAGENT_PROMPT.format(now=f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"),
            },
            {"role": "user", "content": task},
        ]
        self._sessions.append(session, messages[1:])
        provider, registry = self._provider, self._registry
        if origin.persona is not None and self._persona_tools is not None:
            provider, registry = self._persona_tools(origin.persona)
        runner = TurnRunner(provider, registry.without(EXCLUDED_TOOLS), self._events, SUBAGENT_ITERATIONS)
        ctx = replace(origin, turn_id=agent.id)
        with charged_to(replace(current_charge(), purpose="subagent", chat=chat)):
            result = await runner.run(messages, ctx, record=lambda new: self._sessions.append(session, new))
        return result.text
