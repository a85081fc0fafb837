"""A test backend: the real agent stack on a LocalBus and the real litellm against FakeLLM."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TypeVar

from bot.app.agent_wiring import AgentApp
from bot.app.backend import stores_for
from bot.app.gateway import Gateway
from bot.app.rosters import answering
from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust
from bot.config.schema import Config
from bot.events import Delivered, EventBus, TurnFinished, TurnStarted
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from bot.tools.base import Tool
from tests.fakes.openai_server import FakeLLM

E = TypeVar("E")


async def next_event(events: EventBus, kind: type[E], timeout: float = 10.0) -> E:
    """Wait for the next event of a kind (subscribe before causing it)."""
    future: asyncio.Future[E] = asyncio.get_running_loop().create_future()

    def listen(event: object) -> None:
        if isinstance(event, kind) and not future.done():
            future.set_result(event)

    unsubscribe = events.subscribe(listen)
    try:
        return await asyncio.wait_for(future, timeout)
    finally:
        unsubscribe()


class TurnConcurrency:
    """Counts turns running at once from TurnStarted/TurnFinished events; `peak` is the most seen."""

    def __init__(self, events: EventBus) -> None:
        self.running = 0
        self.peak = 0
        events.subscribe(self._track)

    def _track(self, event: object) -> None:
        if isinstance(event, TurnStarted):
            self.running += 1
            self.peak = max(self.peak, self.running)
        elif isinstance(event, TurnFinished):
            self.running -= 1


def make_config(tmp_path: Path, fake: FakeLLM, **overrides: Any) -> Config:
    """A config pointing at the fake LLM, with nested overrides such as agent={"queue_mode": "followup"}."""
    data: dict[str, Any] = {
        "workspace": tmp_path / "workspace",
        "state_dir": tmp_path / "state",
        "llm": {"model": "openai/fake-model", "api_key": "sk-test", "api_base": fake.base_url, "timeout": 10},
        "shutdown_grace": 0.2,  # tests stop with turns hanging on purpose
        # On the redis bus a holder must renew its leases within 2/3 of `lease`; a loaded machine stalls a test's
        # loop for longer than 4 s (the default's), and the gateway lost its channel while it started. Tests of
        # takeovers set their own.
        "bus": {"lease": 60},
    }
    for key, value in overrides.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return Config.model_validate(data)


class RepliesCollector:
    """Keeps what the bot sent, in order, and lets a test wait for the message it expects."""

    def _start_collecting(self) -> None:
        self.outbox: list[OutboundMessage] = []
        self._arrived = asyncio.Condition()

    async def _arrive(self, message: OutboundMessage) -> None:
        async with self._arrived:
            self.outbox.append(message)
            self._arrived.notify_all()

    async def reply_to(self, message: InboundMessage, timeout: float = 10.0) -> OutboundMessage:
        """Wait for the bot's final reply to a message."""
        return await self.wait_for(lambda out: out.in_reply_to == message.id and out.kind != "progress", timeout)

    async def wait_for(self, predicate: Any, timeout: float = 10.0) -> OutboundMessage:
        """Wait until an outbound message matching `predicate` has been sent."""
        async with asyncio.timeout(timeout):
            async with self._arrived:
                while True:
                    for message in self.outbox:
                        if predicate(message):
                            return message
                    await self._arrived.wait()


class Harness(RepliesCollector):
    """Sends messages as users and collects what the bot sends back (each counted delivered); tests stay a few lines."""

    def __init__(
        self, tmp_path: Path, fake: FakeLLM, extra_tools: list[Tool] = (), durable: bool = False, **overrides: Any
    ) -> None:
        """`durable` journals the bus in the state folder as `relaybot run` does, so a restart resumes it."""
        self.config = make_config(tmp_path, fake, **overrides)
        self.fake = fake
        retry = RetryPolicy(attempts=4, base_delay=0.0)
        bus = stores_for(self.config).bus() if durable else None
        self.app = AgentApp(self.config, ModelProvider(self.config.llm, retry), bus=bus, retry=retry)
        for tool in extra_tools:
            self.app.registry.register(tool)
        self._start_collecting()
        self._collector: asyncio.Task[None] | None = None
        self._stack = AsyncExitStack()  # the agent and its roster of one

    async def __aenter__(self) -> Harness:
        await self._stack.enter_async_context(answering(self.app))
        self._collector = asyncio.create_task(self._collect())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._collector:
            self._collector.cancel()
            await asyncio.gather(self._collector, return_exceptions=True)
        await self._stack.aclose()

    async def send(
        self, text: str, chat: str = "test:1", sender: str = "u1", trust: Trust = Trust.OWNER, **fields: Any
    ) -> InboundMessage:
        """Publish a message as a user and return it."""
        message = InboundMessage(ChatRef.parse(chat), sender_id=sender, text=text, trust=trust, **fields)
        await self.app.bus.publish_inbound(message)
        return message

    async def ask(self, text: str, **kwargs: Any) -> str:
        """Send a message and return the reply's text."""
        return (await self.reply_to(await self.send(text, **kwargs))).text

    async def _collect(self) -> None:
        while True:
            message = await self.app.bus.consume_outbound()
            await self.app.bus.mark_sent(message.id)
            self.app.events.emit(Delivered(message.chat, message.id, message.in_reply_to, message.kind))
            await self._arrive(message)


class RecordedSleep:
    """An injected sleep: records the wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class GatewayUnderTest:
    """`relaybot run` in a test: a Gateway with the given channels against fakes; channel retries never sleep."""

    def __init__(
        self, tmp_path: Path, fake: FakeLLM, owners: list[str], channels: dict[str, dict], **overrides: Any
    ) -> None:
        self.config = make_config(tmp_path, fake, owners=owners, channels=channels, **overrides)
        self.sleep = RecordedSleep()
        provider = ModelProvider(self.config.llm, RetryPolicy(base_delay=0.0))
        self.gateway = Gateway(
            self.config,
            provider,
            channel_retry=RetryPolicy(sleep=self.sleep),
            start_retry=RetryPolicy(base_delay=0.05, max_delay=0.2),
        )

    async def __aenter__(self) -> GatewayUnderTest:
        await self.gateway.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.gateway.stop()
