from pathlib import Path

import pytest

from bot.agent.persona.routes import Persona, PersonaRouter
from bot.bus import ChatRef, InboundMessage
from bot.config.schema import Config, LLMConfig, RouteConfig
from bot.errors import ConfigError
from bot.events import StreamDelta
from tests.fakes.openai_server import FakeLLM
from tests.support.harness import Harness


def message(channel: str, chat: str, server: str | None = None) -> InboundMessage:
    return InboundMessage(ChatRef(channel, chat), "1", "hi", server_id=server)


def test_the_most_specific_route_wins() -> None:
    personas = {name: Persona(name) for name in ("chat", "guild", "channel", "fallback")}
    routes = [
        RouteConfig(match="default", persona="fallback"),
        RouteConfig(match="discord", persona="channel"),
        RouteConfig(match="discord:guild:10", persona="guild"),
        RouteConfig(match="discord:chat:555", persona="chat"),
    ]
    router = PersonaRouter(personas, routes)
    assert router.resolve(message("discord", "555", "10")).name == "chat"
    assert router.resolve(message("discord", "556", "10")).name == "guild"
    assert router.resolve(message("discord", "557", None)).name == "channel"
    assert router.resolve(message("slack", "C1", "T1")).name == "fallback"
    assert PersonaRouter(personas, []).resolve(message("slack", "C1")) is None


def test_a_persona_overrides_model_and_sampling_but_keeps_the_provider_settings() -> None:
    base = LLMConfig(model="openai/a", api_base="http://127.0.0.1:1/v1", temperature=0.7)
    llm = Persona("p", model="openai/b", temperature=0.1).llm_config(base)
    assert (llm.model, llm.api_base, llm.temperature, llm.max_tokens) == ("openai/b", base.api_base, 0.1, 4096)


def test_a_persona_at_its_own_server_gets_its_own_key_never_the_llm_one() -> None:
    base = LLMConfig(model="openai/a", api_base="http://127.0.0.1:1/v1", api_key="sk-llm")
    assert Persona("p", model="openai/b").llm_config(base).api_key.get_secret_value() == "sk-llm"
    elsewhere = Persona("p", api_base="http://127.0.0.1:2/v1").llm_config(base)
    assert (elsewhere.api_base, elsewhere.api_key.get_secret_value()) == ("http://127.0.0.1:2/v1", "")
    named = Persona("p", api_base="http://127.0.0.1:2/v1", api_key="sk-p").llm_config(base)
    assert named.api_key.get_secret_value() == "sk-p"


def test_routes_must_name_a_known_persona_and_a_valid_match(tmp_path: Path) -> None:
    base = {"workspace": tmp_path, "state_dir": tmp_path}
    with pytest.raises(ConfigError, match=r"routes\[0\]\.persona.*unknown persona 'x'"):
        Config.model_validate({**base, "routes": [{"match": "telegram", "persona": "x"}]})
    with pytest.raises(ValueError, match="is not a route"):
        Config.model_validate({**base, "personas": {"x": {}}, "routes": [{"match": "discord:guild", "persona": "x"}]})


def test_the_old_guest_tools_key_still_sets_the_guest_role(caplog: pytest.LogCaptureFixture) -> None:
    config = Config.model_validate({"workspace": "w", "state_dir": "s", "tools": {"guest_tools": ["web_search"]}})
    assert config.tools.by_role.guest == ["web_search"]
    assert "deprecated" in caplog.text


async def test_a_persona_limits_tools_and_sets_sampling_and_status_names_it(tmp_path: Path, fake_llm: FakeLLM) -> None:
    persona = {"tools": ["web_search"], "max_tokens": 77, "temperature": 0.1}
    routes = [{"match": "test", "persona": "narrow"}]
    async with Harness(tmp_path, fake_llm, personas={"narrow": persona}, routes=routes) as bot:
        await bot.ask("hi")
        status = await bot.ask("/status")
        await bot.ask("hi", chat="telegram:1")
    narrow, default = fake_llm.requests
    assert [t["function"]["name"] for t in narrow["tools"]] == ["web_search"]
    assert (narrow["max_tokens"], narrow["temperature"]) == (77, 0.1)
    assert len(default["tools"]) > 1 and default["max_tokens"] == 4096
    assert "Persona: narrow" in status and "Model: openai/fake-model" in status and "Your role: owner" in status


async def test_a_persona_without_streaming_sends_no_drafts(tmp_path: Path, fake_llm: FakeLLM) -> None:
    routes = [{"match": "telegram:chat:1", "persona": "calm"}]
    async with Harness(tmp_path, fake_llm, personas={"calm": {"streaming": False}}, routes=routes) as bot:
        deltas: list[str] = []
        bot.app.events.subscribe(lambda event: deltas.append(event.text) if isinstance(event, StreamDelta) else None)
        await bot.ask("quiet please", chat="telegram:1", stream=True)
        assert deltas == []
        await bot.ask("stream please", chat="telegram:2", stream=True)
    assert "".join(deltas).endswith("stream please")
