"""How model-call failures are retried and reported: real litellm against the fake server, sleeps recorded."""

import logging
import socket
from typing import Any

import pytest

from bot.config.schema import LLMConfig
from bot.errors import (
    ContextOverflow,
    MissingApiKey,
    ModelNotFound,
    ProviderAuthError,
    ProviderUnavailable,
    ProviderUnreachable,
    RequestRejected,
)
from bot.llm.failures import classify, socket_failure
from bot.llm.provider import ModelProvider
from bot.llm.transports.litellm import failure_evidence
from bot.llm.transports.litellm_loader import import_litellm
from bot.retry import RetryPolicy
from tests.fakes.openai_server import Error, FakeLLM, Text
from tests.support.harness import RecordedSleep

USER = [{"role": "user", "content": "hi"}]


def provider(sleep: RecordedSleep, **llm: Any) -> ModelProvider:
    config = LLMConfig(**{"model": "openai/fake-model", "api_key": "sk-test", **llm})
    return ModelProvider(config, RetryPolicy(attempts=4, base_delay=1.0, sleep=sleep, jitter=lambda: 1.0))


@pytest.fixture
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.usefixtures("no_provider_keys")
async def test_a_local_server_needs_no_api_key(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("hello from a local model"))
    sleep = RecordedSleep()
    reply = await provider(sleep, api_key="", api_base=fake_llm.base_url).chat(USER)
    assert reply.content == "hello from a local model"
    assert sleep.waits == []


@pytest.mark.usefixtures("no_provider_keys")
@pytest.mark.parametrize(
    ("model", "variable"), [("anthropic/claude-3-5-haiku", "ANTHROPIC_API_KEY"), ("gpt-4o", "OPENAI_API_KEY")]
)
async def test_a_hosted_provider_without_a_key_fails_at_once_naming_the_variable(model: str, variable: str) -> None:
    sleep = RecordedSleep()
    with pytest.raises(MissingApiKey) as info:
        await provider(sleep, model=model, api_key="").chat(USER)
    assert info.value.env_vars == [variable]
    assert variable in info.value.user_message and "llm.api_key" in info.value.user_message
    assert sleep.waits == []


async def test_a_refused_connection_fails_after_one_quick_retry_naming_the_address() -> None:
    sleep = RecordedSleep()
    port = closed_port()
    with pytest.raises(ProviderUnreachable) as info:
        await provider(sleep, api_base=f"http://127.0.0.1:{port}/v1").chat(USER)
    assert info.value.address == f"http://127.0.0.1:{port}"
    assert f"127.0.0.1:{port}" in info.value.user_message and "connection refused" in info.value.user_message
    assert sleep.waits == [1.0]


async def test_an_unknown_host_fails_after_one_quick_retry_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    guarded = socket.getaddrinfo

    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in ("llm.invalid", b"llm.invalid"):  # httpx resolves the IDNA-encoded name
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return guarded(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    sleep = RecordedSleep()
    with pytest.raises(ProviderUnreachable) as info:
        await provider(sleep, api_base="http://llm.invalid:8000/v1").chat(USER, on_delta=lambda _: None)
    assert info.value.address == "http://llm.invalid:8000" and info.value.reason == "unknown host"
    assert len(sleep.waits) == 1


def test_a_lookup_aiohttp_made_with_aiodns_reads_as_an_unknown_host() -> None:
    from aiohttp import ClientConnectorDNSError
    from aiohttp.client_reqrep import ConnectionKey

    key = ConnectionKey("llm.invalid", 8000, False, True, None, None, None, None)
    failed = ClientConnectorDNSError(key, OSError(4, "Domain name not found"))
    assert socket_failure([failed]) == "unknown host"
    assert socket_failure([ConnectionResetError()]) == ""


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_rate_limits_and_server_errors_get_the_full_schedule(fake_llm: FakeLLM, status: int) -> None:
    fake_llm.script(*[Error(status)] * 4)
    sleep = RecordedSleep()
    with pytest.raises(ProviderUnavailable):
        await provider(sleep, api_base=fake_llm.base_url).chat(USER)
    assert len(fake_llm.requests) == 4
    assert sleep.waits == [1.0, 2.0, 4.0]


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after-ms": "2500", "Retry-After": "3"}, 2.5),
        ({"Retry-After": "7"}, 7.0),
        ({"Retry-After": "600"}, 60.0),
    ],
)
async def test_retry_after_from_a_429_is_honoured_and_capped(
    fake_llm: FakeLLM, headers: dict[str, str], wait: float
) -> None:
    fake_llm.script(Error(429, headers=headers), Text("ok"), Error(429, headers=headers), Text("streamed ok"))
    sleep = RecordedSleep()
    llm = provider(sleep, api_base=fake_llm.base_url)
    assert (await llm.chat(USER)).content == "ok"
    assert (await llm.chat(USER, on_delta=lambda _: None)).content == "streamed ok"
    assert sleep.waits == [wait, wait]


@pytest.mark.parametrize("stream", [False, True])
async def test_a_404_means_the_model_is_unknown_whatever_its_text_says(fake_llm: FakeLLM, stream: bool) -> None:
    # litellm files a 404 whose text mentions rate limits as a RateLimitError; the status decides.
    fake_llm.script(Error(404, "model 'ghost' not found; see the rate limits page for the models on your plan"))
    sleep = RecordedSleep()
    with pytest.raises(ModelNotFound) as info:
        await provider(sleep, api_base=fake_llm.base_url).chat(USER, on_delta=(lambda _: None) if stream else None)
    assert "llm.model" in info.value.user_message and "moment" not in info.value.user_message
    assert len(fake_llm.requests) == 1 and sleep.waits == []


async def test_a_404_from_a_plain_text_proxy_is_model_not_found(fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(404, body="404 page not found"))
    with pytest.raises(ModelNotFound):
        await provider(RecordedSleep(), api_base=fake_llm.base_url).chat(USER)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (Error(400, "Invalid value for 'temperature'"), RequestRejected),
        (Error(400, body='{"detail": "messages: field required"}'), RequestRejected),
        (Error(403, "This model is not available in your region"), ProviderAuthError),
        (Error(413, body="Request Entity Too Large"), ContextOverflow),
    ],
)
async def test_client_errors_are_not_retried(fake_llm: FakeLLM, error: Error, kind: type[Exception]) -> None:
    fake_llm.script(error)
    sleep = RecordedSleep()
    with pytest.raises(kind):
        await provider(sleep, api_base=fake_llm.base_url).chat(USER)
    assert len(fake_llm.requests) == 1 and sleep.waits == []


async def test_failures_are_logged_with_their_detail(fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture) -> None:
    fake_llm.script(Error(404))
    with caplog.at_level(logging.WARNING), pytest.raises(ModelNotFound):
        await provider(RecordedSleep(), api_base=fake_llm.base_url).chat(USER)
    [record] = [r for r in caplog.records if r.name == "bot.llm.failures"]
    assert record.levelno == logging.ERROR and "HTTP 404" in record.getMessage()


def test_a_client_that_refuses_before_sending_is_not_retried() -> None:
    import openai

    litellm = import_litellm()
    try:
        try:
            raise openai.OpenAIError("Missing credentials. Please pass an `api_key`")
        except openai.OpenAIError as inner:
            raise litellm.InternalServerError("Missing credentials", "openai", "fake-model") from inner
    except litellm.InternalServerError as exc:
        assert classify(failure_evidence(exc)).kind == "rejected"
