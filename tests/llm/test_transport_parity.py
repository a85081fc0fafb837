"""The direct path and litellm, given the same scripted exchanges, end alike: what the user sees, the ledger rows."""

from collections.abc import AsyncIterator
from dataclasses import astuple, replace
from pathlib import Path

import pytest

from bot.config.schema import LLMConfig
from bot.errors import ProviderError
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from bot.usage.ledger import UsageLedger
from bot.usage.meter import MeteredProvider
from tests.fakes.openai_server import Error, FakeLLM, Reply, Text, ToolCalls

USER = [{"role": "user", "content": "write the report"}]
MEGABYTE = "x" * 1_000_000
TEXT = "the first part of the answer and the rest"
# OpenRouter's shape of an error inside a 200 answer: a numeric code.
RATE_LIMITED_BODY = '{"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min"}}'
OVERFLOW = "This model's maximum context length is 8192 tokens"

SCRIPTS: dict[str, list[Reply]] = {
    "1 MB tool argument in one line": [
        ToolCalls((("write_file", {"path": "a", "content": MEGABYTE}),), chunk_chars=2**21)
    ],
    "1 MB of text in one line": [Text(MEGABYTE, chunk_chars=2**21)],
    "error event before any text": [Text(TEXT, cut_after=0, cut="error"), Text("second try")],
    "error event with a status code": [
        Text(TEXT, cut_after=0, cut="error", error_event=Error(502, code=502)),
        Text("second try"),
    ],
    "error event saying overflow": [Text(TEXT, cut_after=0, cut="error", error_event=Error(400, OVERFLOW))],
    "error event after text": [Text(TEXT, cut_after=2, cut="error"), Text("never asked")],
    "line that is not JSON before any text": [Text(TEXT, cut_after=0, cut="garbage"), Text("second try")],
    "line that is not JSON after text": [Text(TEXT, cut_after=2, cut="garbage"), Text("never asked")],
    "dropped before any text": [Text(TEXT, cut_after=0, cut="drop"), Text("second try")],
    "dropped after text": [Text(TEXT, cut_after=2, cut="drop"), Text("never asked")],
    "413 from the server": [Error(413)],
    "413 page from a proxy": [Error(413, body="<html><h1>413 Request Entity Too Large</h1></html>")],
    "422 every time": [Error(422)] * 6,  # litellm asks twice per call, and a refused stream is asked again whole
    "200 carrying an error": [Error(200, "upstream failed")],
    "200 carrying a status code": [Error(200, body=RATE_LIMITED_BODY), Text("second try")],
    "200 page from a proxy": [Error(200, body="<html>Bad Gateway</html>"), Text("second try")],
}


@pytest.fixture
async def pair(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[dict[str, tuple[MeteredProvider, UsageLedger]]]:
    """The direct path and litellm for the same model and endpoint, each metered into its own ledger."""
    config = LLMConfig(model="openai/fake-model", api_key="sk-test", api_base=fake_llm.base_url)
    providers = {
        "direct": ModelProvider(config, RetryPolicy(attempts=3, base_delay=0.0)),
        "litellm": ModelProvider(
            config.model_copy(update={"fast_path": False}), RetryPolicy(attempts=3, base_delay=0.0)
        ),
    }
    metered = {}
    for name, provider in providers.items():
        ledger = UsageLedger(tmp_path / f"{name}.db")
        metered[name] = (MeteredProvider(provider, ledger), ledger)
    yield metered
    for provider in providers.values():
        await provider.aclose()
    for _, ledger in metered.values():
        ledger.close()


async def outcome(provider: MeteredProvider, fake: FakeLLM, script: list[Reply], streamed: bool) -> tuple:
    """What the user sees of one scripted exchange: the text shown and the answer, or the error's message."""
    fake.script(*script)
    shown: list[str] = []
    try:
        response = await provider.chat(USER, on_delta=shown.append if streamed else None)
    except ProviderError as exc:
        result: tuple = ("".join(shown), type(exc).__name__, exc.user_message)
    else:
        calls = tuple(replace(call, id="") for call in response.tool_calls)
        result = ("".join(shown), response.content, calls, response.finish_reason)
    fake._script.clear()  # an answer the call never asked for must not reach the other path
    return result


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_both_paths_end_an_exchange_the_same_way(pair, fake_llm: FakeLLM, name: str, streamed: bool) -> None:
    seen = {path: await outcome(provider, fake_llm, SCRIPTS[name], streamed) for path, (provider, _) in pair.items()}
    assert seen["direct"] == seen["litellm"]
    rows = {
        path: [astuple(replace(row, ts=0.0, latency=0.0)) for row in ledger.calls()]
        for path, (_, ledger) in pair.items()
    }
    assert rows["direct"] == rows["litellm"] and len(rows["direct"]) == 1
