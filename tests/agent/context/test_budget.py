import json
import logging
from pathlib import Path
from typing import Any

from bot.agent.context.budget import ContextBudget, counted_fit, fit_history
from bot.config.schema import LLMConfig
from bot.errors import ContextOverflow, MessageTooLarge
from bot.llm.context_window import ContextWindow
from bot.llm.tokens import estimate_tokens
from tests.fakes.openai_server import Error, FakeLLM, Text
from tests.support.harness import Harness

OVERFLOW = Error(
    400,
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens. "
    "Please reduce the length of the messages.",
)


def exchange(i: int, size: int = 30) -> list[dict[str, Any]]:
    """One user turn with a tool round: user, assistant call, tool result, assistant answer."""
    call = {"id": f"c{i}", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"q": i})}}
    return [
        {"role": "user", "content": f"question {i} " + "x" * size},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "name": "lookup", "content": "y" * size},
        {"role": "assistant", "content": f"answer {i}"},
    ]


def assert_tool_pairs_whole(messages: list[dict[str, Any]]) -> None:
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            owner = next(m for m in reversed(messages[:index]) if m["role"] != "tool")
            assert message["tool_call_id"] in {c["id"] for c in owner.get("tool_calls") or []}
        for call in message.get("tool_calls") or []:
            answered = {m.get("tool_call_id") for m in messages[index + 1 : index + 1 + len(message["tool_calls"])]}
            assert call["id"] in answered


def config(**fields: Any) -> LLMConfig:
    return LLMConfig(model="openai/fake-model", **fields)


def test_fit_keeps_system_prompt_and_current_turn_and_drops_oldest_whole_exchanges() -> None:
    system = {"role": "system", "content": "s" * 300}
    history = [m for i in range(10) for m in exchange(i)]
    current = [{"role": "user", "content": "now"}, *exchange(99)[1:3]]
    messages = [system, *history, *current]
    fitted = fit_history(messages, limit=200)
    assert fitted[0] is system and fitted[-3:] == current
    assert fitted[1]["role"] == "user" and len(fitted) < len(messages)
    assert sum(estimate_tokens(m) for m in fitted) <= 200
    assert_tool_pairs_whole(fitted)
    assert fit_history(messages, limit=100_000) is messages
    assert fit_history(messages, limit=0) == [system, *current]


def test_fit_keeps_a_stateless_calls_own_system_messages_after_the_prompt() -> None:
    system, theirs = {"role": "system", "content": "ours"}, {"role": "system", "content": "be a pirate"}
    current = [{"role": "user", "content": "now"}]
    messages = [system, theirs, *[m for i in range(10) for m in exchange(i)], *current]
    assert fit_history(messages, limit=100_000) is messages
    assert fit_history(messages, limit=0) == [system, theirs, *current]


def test_the_fit_counts_the_tokens_of_what_it_keeps() -> None:
    system = {"role": "system", "content": "s" * 300}
    history = [m for i in range(10) for m in exchange(i, size=10 * i)]
    messages = [system, *history, {"role": "user", "content": "now"}]
    for limit in (0, 150, 200, 333, 500, 1_000, 100_000):
        fitted, tokens = counted_fit(messages, limit)
        assert fitted == fit_history(messages, limit) and tokens == sum(estimate_tokens(m) for m in fitted)


def test_images_count_at_a_flat_rate_not_by_their_base64_size() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 3_000_000}}
    assert estimate_tokens({"role": "user", "content": [{"type": "text", "text": "abc"}, image]}) == 1 + 1000 + 4


async def test_budget_subtracts_max_tokens_and_tools_and_shrinks_after_an_overflow() -> None:
    now = 0.0
    budget = ContextBudget(ContextWindow(config(context_window=10_000)), max_tokens=2000, clock=lambda: now)
    tools = [{"type": "function", "function": {"name": "t", "description": "d" * 2980, "parameters": {}}}]
    assert await budget.input_limit(None) == 8000
    assert 990 < budget.tools_size(tools) < 1030
    assert await budget.input_limit(tools) == 8000 - budget.tools_size(tools)
    budget.overflowed(4000)
    assert await budget.input_limit(None) == 3000
    now = 301.0
    assert await budget.input_limit(None) == 8000


def prefill(bot: Harness, key: str, exchanges: int, size: int = 30) -> None:
    session = bot.app.sessions.get(key)
    bot.app.sessions.append(session, [m for i in range(exchanges) for m in exchange(i, size)])


async def test_a_2000_message_session_sends_a_request_within_budget_with_tool_pairs_whole(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    llm = {"context_window": 10_000, "max_tokens": 1000}
    async with Harness(tmp_path, fake_llm, llm=llm, agent={"memory_window": 5000}) as bot:
        prefill(bot, "test:1", exchanges=500, size=60)
        assert len(bot.app.sessions.get("test:1").messages) == 2000
        await bot.ask("and now?")
    [request] = fake_llm.requests
    messages = request["messages"]
    tools = sum(len(json.dumps(t)) for t in request.get("tools", [])) // 3
    assert sum(estimate_tokens(m) for m in messages) + tools <= 9000
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    assert messages[-1]["content"].endswith("and now?")
    assert 100 < len(messages) < 2000
    assert "answer 499" in json.dumps(messages) and 'answer 0"' not in json.dumps(messages)
    assert_tool_pairs_whole(messages)


async def test_an_overflow_is_retried_once_with_a_smaller_history(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(OVERFLOW, Text("fits now"))
    async with Harness(tmp_path, fake_llm, llm={"context_window": 100_000}, agent={"memory_window": 1000}) as bot:
        prefill(bot, "test:1", exchanges=100)
        assert await bot.ask("hello") == "fits now"
    first, second = fake_llm.requests
    assert len(second["messages"]) < len(first["messages"])
    assert second["messages"][-1] == first["messages"][-1]
    assert_tool_pairs_whole(second["messages"])


async def test_a_second_overflow_tells_the_user_to_start_over(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(OVERFLOW, OVERFLOW)
    async with Harness(tmp_path, fake_llm, llm={"context_window": 100_000}) as bot:
        prefill(bot, "test:1", exchanges=20, size=150)
        reply = await bot.reply_to(await bot.send("hello"))
    assert reply.kind == "error" and reply.text == ContextOverflow.user_message and "/new" in reply.text
    assert len(fake_llm.requests) == 2


def fresh_workspace(tmp_path: Path) -> None:
    from bot.setup.home import InitReport, init_workspace

    init_workspace(tmp_path / "workspace", InitReport())


async def test_a_local_model_of_unknown_window_keeps_the_last_six_exchanges_by_shrinking_the_reply_reserve(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fresh_workspace(tmp_path)
    async with Harness(tmp_path, fake_llm) as bot:
        prefill(bot, "test:1", exchanges=10, size=120)
        await bot.ask("what did I ask first?")
    [request] = fake_llm.requests
    sent = json.dumps(request["messages"])
    assert all(f"question {i} " in sent for i in range(4, 10))
    assert 1024 <= request["max_tokens"] < 4096
    assert bot.app.budget.cramped is None


async def test_history_that_cannot_fit_warns_once_naming_the_key_and_shows_in_status(
    tmp_path: Path, fake_llm: FakeLLM, caplog
) -> None:
    fresh_workspace(tmp_path)
    async with Harness(tmp_path, fake_llm) as bot:
        prefill(bot, "test:1", exchanges=8, size=3000)
        with caplog.at_level(logging.WARNING):
            await bot.ask("one")
            await bot.ask("two")
        status = await bot.ask("/status")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "llm.context_window" in r.getMessage()]
    assert len(warnings) == 1
    assert fake_llm.requests[0]["max_tokens"] == 1024
    assert "llm.context_window" in status


async def test_a_memory_file_larger_than_its_share_is_cut_with_a_note(
    tmp_path: Path, fake_llm: FakeLLM, caplog
) -> None:
    memory = tmp_path / "workspace" / "memory" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("- fact\n" * 3000 + "- THE LAST FACT\n")
    async with Harness(tmp_path, fake_llm, llm={"context_window": 8000}) as bot:
        with caplog.at_level(logging.INFO, logger="bot.agent.context.builder"):
            await bot.ask("hi", chat="console:local")
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert "THE LAST FACT" not in system
    assert "only its first 6,000 are shown" in system
    assert any("MEMORY.md is 21015 characters" in r.getMessage() for r in caplog.records)


async def test_an_overflow_of_the_first_message_says_the_message_is_too_large(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(OVERFLOW, Text("never asked"))
    async with Harness(tmp_path, fake_llm) as bot:
        reply = await bot.reply_to(await bot.send("a very long paste " + "word " * 4000))
    assert reply.kind == "error" and reply.text == MessageTooLarge.user_message
    assert "/new" not in reply.text and "message is too large" in reply.text
    assert len(fake_llm.requests) == 1
