"""A key goes only where the config sends it: with `api_base` on another host, nothing from the environment."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config.loader import load_config
from bot.config.schema import LLMConfig
from bot.llm.images import ImageModel
from bot.llm.keys import PLACEHOLDER_KEY, call_key, environment_allowed, inherited_key
from bot.llm.provider import ModelProvider
from bot.llm.transcription import SpeechModel
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM

SHELL_KEY = "sk-from-the-shell"
PLACEHOLDER = f"Bearer {PLACEHOLDER_KEY}"  # what litellm sends when told a key, so that it reads none itself
MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def shell_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A real-looking OpenAI key in the environment, as a user's shell has it; no base URL from there."""
    monkeypatch.setenv("OPENAI_API_KEY", SHELL_KEY)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    yield


async def chat(config: LLMConfig, streamed: bool) -> str:
    """One call through a fresh provider."""
    provider = ModelProvider(config, RetryPolicy(attempts=1, base_delay=0.0))
    try:
        return (await provider.chat(MESSAGES, on_delta=(lambda _: None) if streamed else None)).content
    finally:
        await provider.aclose()


def sent_to(fake: FakeLLM, path: str) -> list[str | None]:
    """The Authorization headers the requests to `path` carried (None where there was none)."""
    return [authorization for seen, authorization in fake.authorizations if seen == path]


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "litellm"])
async def test_a_key_in_the_shell_never_reaches_a_local_server(
    fake_llm: FakeLLM, fast_path: bool, streamed: bool
) -> None:
    config = LLMConfig(model="openai/fake-model", api_base=fake_llm.base_url, fast_path=fast_path)
    assert await chat(config, streamed) == "echo: hello"
    # The direct path sends no Authorization at all; litellm's client insists on one, so it gets the placeholder.
    assert sent_to(fake_llm, "/v1/chat/completions") == [None if fast_path else PLACEHOLDER]


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "litellm"])
async def test_a_variable_the_config_names_is_sent(fake_llm: FakeLLM, tmp_path: Path, fast_path: bool) -> None:
    file = tmp_path / "config.yaml"
    file.write_text(
        f'llm:\n  model: openai/fake-model\n  api_base: "{fake_llm.base_url}"\n'
        f'  api_key: "${{OPENAI_API_KEY}}"\n  fast_path: {str(fast_path).lower()}\n'
    )
    assert await chat(load_config(file).llm, streamed=False) == "echo: hello"
    assert sent_to(fake_llm, "/v1/chat/completions") == [f"Bearer {SHELL_KEY}"]


async def test_transcription_at_a_local_server_gets_no_key_from_the_shell(fake_llm: FakeLLM, tmp_path: Path) -> None:
    audio = tmp_path / "note.ogg"
    audio.write_bytes(b"OggS fake audio")
    config = LLMConfig(model="openai/fake-model", api_base=fake_llm.base_url, transcription_model="openai/whisper-1")
    assert (await SpeechModel(config).transcribe(audio)).text == "transcribed words"
    assert sent_to(fake_llm, "/v1/audio/transcriptions") == [PLACEHOLDER]


async def test_transcription_at_its_own_server_does_not_get_the_llm_key(fake_llm: FakeLLM, tmp_path: Path) -> None:
    audio = tmp_path / "note.ogg"
    audio.write_bytes(b"OggS fake audio")
    config = LLMConfig(
        api_key="sk-for-openai", transcription_model="openai/whisper-1", transcription_api_base=fake_llm.base_url
    )
    await SpeechModel(config).transcribe(audio)
    assert sent_to(fake_llm, "/v1/audio/transcriptions") == [PLACEHOLDER]


async def test_image_generation_at_a_local_server_gets_no_key_from_the_shell(fake_llm: FakeLLM) -> None:
    picture = await ImageModel("openai/gpt-image-1", fake_llm.base_url, "", "1024x1024").generate("a cat")
    assert picture.data and sent_to(fake_llm, "/v1/images/generations") == [PLACEHOLDER]


def test_the_providers_variable_is_allowed_only_on_its_own_host() -> None:
    assert environment_allowed("openai/gpt-4o", None)
    assert environment_allowed("openai/gpt-4o", "https://api.openai.com/v1")
    assert environment_allowed("gpt-4o", "https://API.openai.com/v1")
    assert environment_allowed("azure/my-deployment", "https://mine.openai.azure.com")
    assert not environment_allowed("openai/gpt-4o", "http://127.0.0.1:8000/v1")
    assert not environment_allowed("openai/gpt-4o", "https://api.openai.com.evil.example/v1")
    assert not environment_allowed("anthropic/claude-3-5-haiku", "https://api.openai.com/v1")
    assert not environment_allowed("ollama/llama3", "http://127.0.0.1:11434")


def test_the_configs_key_wins_and_elsewhere_a_placeholder_stands_in() -> None:
    assert call_key("openai/x", "sk-mine", "http://127.0.0.1:1/v1") == "sk-mine"
    assert call_key("openai/x", "", None) is None
    assert call_key("openai/x", "", "http://127.0.0.1:1/v1") == PLACEHOLDER_KEY


def test_a_key_follows_its_base_only() -> None:
    assert inherited_key("sk-own", "http://b", "sk-llm", "http://a") == "sk-own"
    assert inherited_key("", None, "sk-llm", "http://a") == "sk-llm"
    assert inherited_key("", "http://a", "sk-llm", "http://a") == "sk-llm"
    assert inherited_key("", "http://b", "sk-llm", "http://a") == ""
