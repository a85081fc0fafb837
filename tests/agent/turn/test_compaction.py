"""A long tool loop inside a small window: old results shortened, old rounds summarised, the turn carries on."""

import itertools
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.agent.turn.compaction import TurnCompactor, tokens_of
from bot.bus import ChatRef
from bot.errors import PromptTooLarge
from bot.hooks.handlers import Hooks
from bot.hooks.hook_events import AfterCompaction, BeforeCompaction
from bot.llm.tokens import estimate_tokens, estimate_tool_tokens
from bot.llm.types import LLMResponse
from bot.sessions.safe_history import pair_safe
from bot.tools.base import Tool, ToolContext
from bot.usage.charge import Charge, charged_to
from tests.agent.context.test_budget import OVERFLOW, assert_tool_pairs_whole
from tests.fakes.openai_server import FakeLLM, Reply, Text, ToolCalls
from tests.support.harness import Harness

WINDOW = 6400  # with web_fetch alone: old rounds must be cut, then summarised, to fit
PAGES = 6
PAGE_CHARS = 12_000


class BigPages(Tool):
    """Stands in for web_fetch: every page is long, and says which page it is at both ends."""

    name = "web_fetch"
    description = "Fetch a web page."
    parameters = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        url = args["url"]
        return f"BEGIN {url} " + "lorem ipsum " * (PAGE_CHARS // 12) + f" END {url}"


def researching(tmp_path: Path, fake: FakeLLM) -> Harness:
    """The bot of the research tests, offering web_fetch alone: the window arithmetic holds whatever tools the
    bot gains."""
    bot = Harness(tmp_path, fake, extra_tools=[BigPages()], llm={"context_window": WINDOW})
    for name in bot.app.registry.names():
        if name != BigPages.name:
            bot.app.registry.unregister(name)
    return bot


def is_summary(request: dict) -> bool:
    return not request.get("tools") and "condense" in request["messages"][0]["content"]


def researcher() -> Callable[[dict], Reply]:
    """Fetch PAGES pages, one per request, then answer; write notes when asked to condense."""
    asked = itertools.count()

    def reply(request: dict) -> Reply:
        if is_summary(request):
            return Text("NOTES: pages fetched so far were all lorem ipsum.")
        if request_tokens(request) + request["max_tokens"] > WINDOW:
            return OVERFLOW  # as a real server with this window would
        page = next(asked)
        if page < PAGES:
            return ToolCalls((("web_fetch", {"url": f"https://example.test/{page}"}),))
        return Text("Here is what I found.")

    return reply


def request_tokens(request: dict) -> int:
    return sum(estimate_tokens(m) for m in request["messages"]) + estimate_tool_tokens(request.get("tools") or [])


async def test_a_research_turn_larger_than_the_window_finishes_with_its_requests_inside_the_window(
    tmp_path: Path,
) -> None:
    async with (
        FakeLLM(default=researcher()) as fake,
        researching(tmp_path, fake) as bot,
    ):
        assert await bot.ask("research lorem ipsum for me") == "Here is what I found."
        rows = bot.app.ledger.calls()
    turn = [r for r in fake.requests if not is_summary(r)]
    summaries = [r for r in fake.requests if is_summary(r)]
    assert len(summaries) >= 1
    assert sum(1 for r in turn if r["messages"][-1]["role"] == "tool") >= PAGES
    for request in turn:
        assert request_tokens(request) + request["max_tokens"] <= WINDOW
        assert_tool_pairs_whole(request["messages"])
        latest = request["messages"][-1]
        if latest["role"] == "tool":
            assert len(latest["content"]) > PAGE_CHARS  # the latest result reaches the model whole
    for request in summaries:
        assert request_tokens(request) + request["max_tokens"] <= WINDOW
    last = json.dumps(turn[-1]["messages"])
    assert "characters cut from this tool result" in json.dumps(turn[2]["messages"])
    assert "NOTES: pages fetched so far" in last
    assert [r.purpose for r in rows].count("compaction") == len(summaries)
    saved = [m for m in bot.app.sessions.get("test:1").messages if m["role"] == "tool"]
    assert len(saved) >= PAGES and all(len(m["content"]) > PAGE_CHARS for m in saved)


async def test_the_turn_after_a_compacted_one_reads_the_session_not_the_compacted_request(tmp_path: Path) -> None:
    async with (
        FakeLLM(default=researcher()) as fake,
        researching(tmp_path, fake) as bot,
    ):
        await bot.ask("research lorem ipsum for me")
        session = bot.app.sessions.get("test:1")
        history = session.history(100)
        assert history == pair_safe(session.messages)
        assert sum(1 for m in history if m["role"] == "tool") >= PAGES  # whole results, as the session keeps them
        assert await bot.ask("thanks") == "Here is what I found."
    follow_up = fake.requests[-1]
    assert "NOTES: pages fetched" not in json.dumps(follow_up["messages"])
    assert follow_up["messages"][-1]["content"].endswith("thanks")
    assert request_tokens(follow_up) + follow_up["max_tokens"] <= WINDOW


async def test_a_window_too_small_for_the_bot_itself_blames_the_config_not_the_user(
    tmp_path: Path, fake_llm: FakeLLM, caplog
) -> None:
    async with Harness(tmp_path, fake_llm, llm={"context_window": 1500}) as bot:
        with caplog.at_level(logging.WARNING):
            reply = await bot.reply_to(await bot.send("hi"))
    assert reply.kind == "error" and reply.text == PromptTooLarge.user_message
    assert "shorter" not in reply.text and "owner" in reply.text
    assert fake_llm.requests == []
    [warning] = [r.getMessage() for r in caplog.records if "cannot hold relaybot's own system prompt" in r.getMessage()]
    assert "llm.context_window" in warning and "1,500 tokens" in warning


async def test_a_short_message_the_server_finds_too_large_blames_the_configured_window(
    tmp_path: Path, fake_llm: FakeLLM, caplog
) -> None:
    fake_llm.script(OVERFLOW)
    async with Harness(tmp_path, fake_llm, llm={"context_window": 32_000}) as bot:
        with caplog.at_level(logging.WARNING):
            reply = await bot.reply_to(await bot.send("hi"))
    assert reply.text == PromptTooLarge.user_message
    [warning] = [r.getMessage() for r in caplog.records if "relaybot's own system prompt" in r.getMessage()]
    assert warning.startswith(
        "the model server refused the request as too long for its context window, although the config "
        "(llm.context_window) claims 32,000 tokens"
    )
    assert "Set llm.context_window to the window the server really has" in warning and "cannot hold" not in warning


async def test_a_short_message_refused_with_a_discovered_window_says_what_relaybot_took_it_as(
    tmp_path: Path, fake_llm: FakeLLM, caplog
) -> None:
    fake_llm.context_length = 32_768
    fake_llm.script(OVERFLOW)
    async with Harness(tmp_path, fake_llm) as bot:
        with caplog.at_level(logging.WARNING):
            await bot.reply_to(await bot.send("hi"))
    assert any("although relaybot took the window as 32,768 tokens" in r.getMessage() for r in caplog.records)


class Notes:
    """A provider seam that writes notes and counts how often it was asked."""

    model = "notes"

    def __init__(self) -> None:
        self.asked = 0

    async def chat(self, messages: Any, tools: Any = None, on_delta: Any = None, max_tokens: Any = None) -> LLMResponse:
        self.asked += 1
        return LLMResponse("NOTES")


def research_turn(rounds: int, size: int) -> list[dict[str, Any]]:
    turn: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "research"}]
    for i in range(rounds):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "web_fetch", "arguments": "{}"}}
        turn += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "name": "web_fetch", "content": f"page {i} " + "x" * size},
        ]
    return turn


async def test_shortening_old_results_is_tried_before_asking_the_model() -> None:
    notes, messages = Notes(), research_turn(rounds=3, size=6000)
    await TurnCompactor(notes).fit(messages, limit=3000)
    assert notes.asked == 0 and len(messages) == 8
    assert "characters cut from this tool result" in messages[3]["content"]
    assert len(messages[7]["content"]) > 6000  # the latest result is left whole
    assert tokens_of(messages) <= 3000
    assert_tool_pairs_whole(messages)


async def test_summarising_replaces_old_rounds_once_and_keeps_the_latest_round_paired() -> None:
    notes, messages = Notes(), research_turn(rounds=6, size=6000)
    await TurnCompactor(notes).fit(messages, limit=2500)
    assert notes.asked == 1
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "assistant", "tool"]
    assert messages[2]["content"].endswith("NOTES") and tokens_of(messages) <= 2500
    assert_tool_pairs_whole(messages)
    await TurnCompactor(notes).fit(messages, limit=1000)  # only the latest round is left to cut: no second summary
    assert notes.asked == 1 and tokens_of(messages) <= 1000


async def test_summarising_a_turn_runs_the_compaction_hooks_of_its_session() -> None:
    hooks, heard = Hooks(), []
    hooks.on("before_compaction", heard.append)
    hooks.on("after_compaction", heard.append)
    notes, messages = Notes(), research_turn(rounds=6, size=6000)
    with charged_to(Charge("chat", ChatRef("telegram", "5"))):
        await TurnCompactor(notes, hooks).fit(messages, limit=2500)
    chat = ChatRef("telegram", "5")
    assert heard == [BeforeCompaction(chat, 10), AfterCompaction(chat, 10, True)]
