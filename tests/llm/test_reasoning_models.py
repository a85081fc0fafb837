"""Reasoning models on both paths: the body litellm sends, which OpenAI accepts, and the model's reasoning read back."""

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from bot.agent.persona.routes import personas_from
from bot.config.schema import LLMConfig, PersonaConfig
from bot.llm.model_params import openai_body
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM, Text

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hello"}]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
    }
]

Make = Callable[..., ModelProvider]


@pytest.fixture
async def make(fake_llm: FakeLLM) -> AsyncIterator[Make]:
    """Providers for the fake server, closed after the test."""
    made: list[ModelProvider] = []

    def provider(model: str, fast_path: bool, **settings: Any) -> ModelProvider:
        config = LLMConfig(
            model=model, api_key="sk-test", api_base=fake_llm.base_url, max_tokens=99, fast_path=fast_path, **settings
        )
        made.append(ModelProvider(config, RetryPolicy(attempts=1, base_delay=0.0)))
        return made[-1]

    yield provider
    for provider_made in made:
        await provider_made.aclose()


class Sink:
    """A delta handler that also takes reasoning, as the agent's stream does."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.thoughts: list[str] = []

    def __call__(self, text: str) -> None:
        self.text.append(text)

    def reasoning(self, text: str) -> None:
        self.thoughts.append(text)


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "openai/o3-mini", "openai/gpt-5-mini"])
@pytest.mark.parametrize("effort", [None, "low"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_both_paths_send_the_body_openai_accepts(
    make: Make, fake_llm: FakeLLM, model: str, effort: str | None, streamed: bool
) -> None:
    bodies = []
    for fast_path in (True, False):
        provider = make(model, fast_path, reasoning_effort=effort)
        answer = await provider.chat(MESSAGES, TOOLS, on_delta=(lambda _: None) if streamed else None)
        assert answer.content == "echo: hello"
        bodies.append(fake_llm.requests[-1])
    fast, litellm = bodies
    assert fast == litellm
    if model == "openai/gpt-4o-mini":
        assert (fast["max_tokens"], fast["temperature"]) == (99, 0.7)
        assert "reasoning_effort" not in fast
    else:
        assert fast["max_completion_tokens"] == 99
        assert "max_tokens" not in fast and "temperature" not in fast
        assert fast.get("reasoning_effort") == effort


@pytest.mark.parametrize(
    ("model", "extra", "param"),
    [
        ("o3-mini", {"max_tokens": 5}, "max_tokens"),
        ("gpt-5-mini", {"temperature": 0.7}, "temperature"),
        ("gpt-4o-mini", {"reasoning_effort": "low"}, "reasoning_effort"),
    ],
)
async def test_the_fake_refuses_what_openai_refuses(fake_llm: FakeLLM, model: str, extra: dict, param: str) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        body = {"model": model, "messages": MESSAGES, **extra}
        async with session.post(f"{fake_llm.base_url}/chat/completions", json=body) as response:
            assert response.status == 400
            assert (await response.json())["error"]["param"] == param


@pytest.mark.parametrize("model", ["o1", "o4-mini", "gpt-5.1", "gpt-5-chat-latest", "gpt-5-search-api", "qwen3-local"])
async def test_every_family_gets_the_body_litellm_sends(make: Make, fake_llm: FakeLLM, model: str) -> None:
    for effort in (None, "none", "low", "xhigh"):
        for temperature in (0.7, 1.0):
            settings = {"reasoning_effort": effort, "temperature": temperature}
            await make(f"openai/{model}", True, **settings).chat(MESSAGES, TOOLS)
            await make(f"openai/{model}", False, **settings).chat(MESSAGES, TOOLS)
            fast, litellm = fake_llm.requests[-2:]
            assert fast == litellm, (effort, temperature)


@pytest.mark.parametrize(
    ("model", "settings", "expected"),
    [
        # gpt-5.1 reasons by default at "none": a temperature stays, unless reasoning is asked for.
        ("gpt-5.1", {"temperature": 0.2}, {"temperature": 0.2}),
        ("gpt-5.1", {"temperature": 0.2, "reasoning_effort": "low"}, {"reasoning_effort": "low"}),
        # xhigh is opt-in per model; gpt-5-mini's row does not take it, so it is left out.
        ("gpt-5-mini", {"reasoning_effort": "xhigh"}, {}),
        ("gpt-5-mini", {"temperature": 1}, {"temperature": 1}),
        # a model outside litellm's catalogue (a local server's) gets reasoning_effort and its sampling as sent.
        (
            "qwen3-local",
            {"temperature": 0.2, "reasoning_effort": "high"},
            {"temperature": 0.2, "reasoning_effort": "high"},
        ),
        # gpt-5-chat is not a reasoning model.
        ("gpt-5-chat-latest", {"reasoning_effort": "low"}, {}),
    ],
)
def test_parameters_are_mapped_per_family(model: str, settings: dict, expected: dict) -> None:
    body = openai_body({"model": model, "messages": MESSAGES, **settings})
    assert {
        key: value
        for key, value in body.items()
        if key not in ("model", "messages", "max_completion_tokens", "max_tokens")
    } == expected


def test_o_series_without_system_messages_gets_them_as_user_messages() -> None:
    body = openai_body({"model": "o3-mini", "messages": MESSAGES, "max_tokens": 10, "tools": TOOLS})
    assert body["messages"][0] == {"role": "user", "content": "You are terse."}
    assert body["tools"] == TOOLS and body["max_completion_tokens"] == 10


def test_a_persona_sets_its_own_reasoning_effort(tmp_path) -> None:
    personas = personas_from({"deep": PersonaConfig(model="openai/o3-mini", reasoning_effort="high")}, tmp_path)
    config = personas["deep"].llm_config(LLMConfig(reasoning_effort="low"))
    assert (config.model, config.reasoning_effort) == ("openai/o3-mini", "high")
    assert (
        personas_from({"plain": PersonaConfig()}, tmp_path)["plain"]
        .llm_config(LLMConfig(reasoning_effort="low"))
        .reasoning_effort
        == "low"
    )


@pytest.mark.parametrize(
    ("field", "fast_path"),
    [
        ("reasoning_content", True),
        ("reasoning", True),
        ("thinking", True),
        ("reasoning_content", False),
        ("reasoning", False),
        # litellm drops a delta's unknown `thinking` field, so only the direct path can show it streamed.
    ],
)
async def test_streamed_reasoning_is_read_from_any_field(
    make: Make, fake_llm: FakeLLM, field: str, fast_path: bool
) -> None:
    fake_llm.script(Text("The answer.", reasoning="First, think it over.", reasoning_field=field))
    sink = Sink()
    answer = await make("openai/fake-model", fast_path).chat(MESSAGES, on_delta=sink)
    assert answer.content == "The answer."
    assert "".join(sink.thoughts) == "First, think it over."
    assert "".join(sink.text) == "The answer."


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "thinking"])
@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "litellm"])
async def test_reasoning_of_an_unstreamed_answer_is_shown(
    make: Make, fake_llm: FakeLLM, field: str, fast_path: bool
) -> None:
    fake_llm.refuse_streaming = 400
    fake_llm.script(Text("The answer.", reasoning="Think it over.", reasoning_field=field))
    sink = Sink()
    answer = await make("openai/fake-model", fast_path).chat(MESSAGES, on_delta=sink)
    assert answer.content == "The answer."
    assert (sink.thoughts, sink.text) == (["Think it over."], ["The answer."])


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "litellm"])
async def test_think_blocks_of_an_unstreamed_answer_are_reasoning(
    make: Make, fake_llm: FakeLLM, fast_path: bool
) -> None:
    fake_llm.refuse_streaming = 400
    fake_llm.script(Text("<think>Think it over.</think>The answer."))
    sink = Sink()
    answer = await make("openai/fake-model", fast_path).chat(MESSAGES, on_delta=sink)
    assert answer.content == "The answer."
    assert (sink.thoughts, sink.text) == (["Think it over."], ["The answer."])
