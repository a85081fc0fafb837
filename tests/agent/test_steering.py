"""Steer mode: a message sent mid-turn joins that turn and is handled with it, across a restart too."""

from collections.abc import Callable
from pathlib import Path

from bot.bus.journal import Journal
from bot.config.paths import journal_path
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness
from tests.support.model_requests import user_texts


async def steer_then_restart(
    tmp_path: Path, fake: FakeLLM, between: Callable[[Harness], None] = lambda bot: None, **overrides: object
) -> None:
    """Steer a message into a running turn, stop (then `between`), start again on the same state, ask once more."""
    async with Harness(tmp_path, fake, durable=True, agent={"queue_mode": "steer"}, **overrides) as bot:
        fake.script(ToolCalls((("list_dir", {}),), latency=0.3), Text("Using the other folder."))
        first = await bot.send("list the files")
        await fake.wait_for_requests(1)
        steered = await bot.send("actually, the other folder")
        assert (await bot.reply_to(first)).text == "Using the other folder."
    between(bot)
    async with Harness(tmp_path, fake, durable=True, agent={"queue_mode": "steer"}, **overrides) as bot:
        fake.script(Text("pong"))
        assert await bot.ask("ping") == "pong"
        assert not [out for out in bot.outbox if out.in_reply_to == steered.id]
    assert len(fake.requests) == 3
    assert user_texts(fake.requests[1])[-1].endswith("actually, the other folder")
    assert user_texts(fake.requests[2])[-1].endswith("ping")


def nothing_pending(bot: Harness) -> None:
    journal = Journal(journal_path(bot.config))
    journal.open()
    try:
        assert journal.pending_inbound() == ([], [])
    finally:
        journal.close()


async def test_a_steered_message_is_handled_with_its_turn_and_not_run_again_after_a_restart(tmp_path: Path) -> None:
    async with FakeLLM() as fake:
        await steer_then_restart(tmp_path, fake, between=nothing_pending)


async def test_on_the_redis_bus_a_steered_message_is_not_run_again_after_a_restart(
    tmp_path: Path, redis_url: str
) -> None:
    async with FakeLLM() as fake:
        await steer_then_restart(tmp_path, fake, bus={"backend": "redis", "url": redis_url})
