"""One agent asking another (the ask_agent tool): the other answers in its own session for the asking chat, from
its own workspace and memory, with its own model and tools, billed to the asker's ledger and budget."""

from __future__ import annotations

import logging
from dataclasses import replace

from bot.agent.context.budget import BudgetedProvider, ContextBudget
from bot.agent.subagents import EXCLUDED_TOOLS
from bot.agent.turn.runner import TurnRunner
from bot.agents.handle import AgentHandle
from bot.bus import InboundMessage, new_id
from bot.llm.context_window import ContextWindow
from bot.memory.files import scope_for
from bot.tools.base import ToolContext
from bot.usage.charge import charged_to, current_charge

logger = logging.getLogger(__name__)

QUIET_TOOLS = EXCLUDED_TOOLS | {"ask_agent"}
"""What an asked agent may not use: nothing that speaks in the chat, starts background work, or asks onwards."""


def question_text(asker: str, question: str) -> str:
    """How the question reads in the asked agent's session."""
    return (
        f"[agent {asker} asks you, for the user of this chat; your answer goes back to it, not to the user]\n{question}"
    )


async def ask_agent(asker: AgentHandle, asked: AgentHandle, question: str, ctx: ToolContext) -> str:
    """`asked`'s answer to `question`, in its session for `ctx`'s chat; every model call is a row of `asker`'s."""
    config = asked.config
    text = question_text(asker.name, question)
    message = InboundMessage(
        ctx.chat,
        sender_id=f"agent:{asker.name}",
        text=text,
        trust=ctx.trust,
        is_direct=ctx.is_direct,
        person=ctx.person,
    )
    scope = scope_for(config.workspace, message)
    session = await asked.sessions.load(ctx.chat.session_key)
    messages = asked.context.build(message, scope, session.history(config.agent.memory_window), text)
    asked.sessions.append(session, [{"role": "user", "content": text}])
    budget = ContextBudget(ContextWindow(config.llm), config.llm.max_tokens)
    provider = BudgetedProvider(asker.models.provider(config.llm), budget, asked.plugins.hooks)
    runner = TurnRunner(
        provider,
        asked.registry.without(QUIET_TOOLS),
        asked.events,
        config.agent.max_iterations,
        config.agent.max_tool_result_chars,
    )
    turn = replace(ctx, turn_id=new_id(), persona=None, memory_dir=scope.directory, shown_from=None)
    logger.info("[%s] agent %s asks agent %s", ctx.session_key, asker.name, asked.name)
    with charged_to(replace(current_charge(), purpose="ask_agent")):
        result = await runner.run(messages, turn, record=lambda new: asked.sessions.append(session, new))
    return result.text
