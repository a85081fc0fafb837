"""One conversation played through the real gateway: one allowlisted Telegram user's DM on the fake Telegram, the
real litellm against the fake model; the exchanges in order, then each question in the same chat."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.app.agent_wiring import AgentApp
from bot.events import TurnFinished
from bot.ops.collector import freeze_started
from locomo.conversation import Conversation, Exchange, Question
from locomo.cpu import measured, workers_noted
from locomo.model import LocomoModel, Seen
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import GatewayUnderTest, next_event

USER = 42  # the allowlisted Telegram user, writing in their DM
WINDOW = 65_536  # the context window the fake model reports, as the other benches assume
TURN_TIMEOUT = 60.0


@dataclass
class Played:
    """What a playback left: per question what the model saw, and the CPU each auto-recall cost (seconds)."""

    seen: dict[str, Seen]
    recall_cpu: list[float] = field(default_factory=list)
    seconds: float = 0.0


def telegram_section(telegram: FakeTelegram) -> dict[str, Any]:
    """Telegram against the fake, the user allowlisted (not an owner), replies sent whole."""
    return {
        "enabled": True,
        "token": telegram.token,
        "api_base": telegram.base_url,
        "dm_policy": "allowlist",
        "allow_from": [str(USER)],
        "streaming": "off",
    }


class Chat:
    """The user's DM with the gateway: each turn said, answered, delivered and consolidated before the next."""

    def __init__(self, model: LocomoModel, telegram: FakeTelegram, agent: AgentApp) -> None:
        self._model = model
        self._telegram = telegram
        self._agent = agent
        self._sent = 0

    async def say(self, turn: Exchange | Question) -> None:
        """Send the turn's message and wait for its reply, then for any consolidation it started."""
        self._model.now = turn
        finished = asyncio.ensure_future(next_event(self._agent.events, TurnFinished, TURN_TIMEOUT))
        await asyncio.sleep(0)  # subscribed before the message goes out
        self._telegram.text(turn.asked, chat_id=USER, user_id=USER)
        await finished
        self._sent += 1
        await self._telegram.wait_for_sent(self._sent, TURN_TIMEOUT)
        await self._agent.memory.idle()


async def play(
    conversation: Conversation, folder: Path, questions: int | None = None, memory: dict[str, Any] | None = None
) -> Played:
    """Play the conversation, then ask its questions (the first `questions` of them, or all); `memory` is the
    config's memory section (keywords only when None). With embeddings, every passage has its vector before the
    first question."""
    model = LocomoModel(conversation)
    played = Played(model.seen)
    started = time.perf_counter()
    async with FakeLLM(default=model, context_length=WINDOW) as fake, FakeTelegram() as telegram:
        access = {"rate_limit": 0}  # a conversation replayed at machine speed is no flood
        sections = {"access": access, **({"memory": memory} if memory else {})}
        async with GatewayUnderTest(folder, fake, [], {"telegram": telegram_section(telegram)}, **sections) as bot:
            await bot.gateway.manager.ready("telegram")
            agent = bot.gateway.agent
            await agent.warmed()
            freeze_started()  # as `relaybot run` does once started: its full collections skip the start-up heap
            chat = Chat(model, telegram, agent)
            for exchange in conversation.exchanges:
                await chat.say(exchange)
            if agent.indexes.semantic is not None:
                await agent.indexes.semantic.idle()
            agent.auto_recall.block = measured(agent.auto_recall.block, played.recall_cpu)
            with workers_noted():
                for question in conversation.questions[:questions]:
                    await chat.say(question)
    played.seconds = time.perf_counter() - started
    return played
