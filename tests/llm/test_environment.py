"""Both paths read the environment the same way: the base URL, an HTTP proxy, and `llm.extra_headers` sent along."""

from collections.abc import AsyncIterator

import pytest

from bot.config.schema import LLMConfig
from bot.errors import ProviderError, ProviderUnreachable
from bot.llm.provider import ModelProvider
from bot.llm.transports.openai_endpoint import BASE_VARIABLES, DEFAULT_BASE, base_url
from bot.retry import RetryPolicy
from tests.fakes.http_proxy import ForwardingProxy
from tests.fakes.openai_server import FakeLLM

MESSAGES = [{"role": "user", "content": "hello"}]
PATHS = pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "litellm"])
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the variables it is about, and nothing from the machine leaks in."""
    for name in (*_PROXY_VARIABLES, *(v.lower() for v in _PROXY_VARIABLES), "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def proxy() -> AsyncIterator[ForwardingProxy]:
    """A forwarding proxy on loopback."""
    async with ForwardingProxy() as started:
        yield started


async def answer(config: LLMConfig, streamed: bool = False) -> str:
    """One call through a fresh provider (so a client made before the environment changed is not reused)."""
    provider = ModelProvider(config, RetryPolicy(attempts=1, base_delay=0.0))
    try:
        return (await provider.chat(MESSAGES, on_delta=(lambda _: None) if streamed else None)).content
    finally:
        await provider.aclose()


def dead_url() -> str:
    """A loopback URL nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


@PATHS
@pytest.mark.parametrize("variable", ["OPENAI_BASE_URL", "OPENAI_API_BASE"])
async def test_the_base_url_comes_from_the_environment(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, fast_path: bool, variable: str
) -> None:
    monkeypatch.setenv(variable, fake_llm.base_url)
    config = LLMConfig(model="openai/gpt-4o-mini", api_key=f"sk-env-{variable}-{fast_path}", fast_path=fast_path)
    assert await answer(config) == "echo: hello"
    assert fake_llm.requests[-1]["model"] == "gpt-4o-mini"


@PATHS
async def test_openai_base_url_wins_over_openai_api_base(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, fast_path: bool
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_API_BASE", dead_url())
    config = LLMConfig(model="openai/gpt-4o-mini", api_key=f"sk-order-{fast_path}", fast_path=fast_path)
    assert await answer(config) == "echo: hello"


@PATHS
async def test_llm_api_base_wins_over_the_environment(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, fast_path: bool
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", dead_url())
    config = LLMConfig(model="openai/gpt-4o-mini", api_key="sk-test", api_base=fake_llm.base_url, fast_path=fast_path)
    assert await answer(config) == "echo: hello"


def test_without_api_base_or_the_environment_the_providers_own_endpoint_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in BASE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert base_url(LLMConfig()) == DEFAULT_BASE  # named only: no test sends a request there


@PATHS
@pytest.mark.parametrize("streamed", [False, True])
async def test_calls_go_through_the_http_proxy(
    fake_llm: FakeLLM, proxy: ForwardingProxy, monkeypatch: pytest.MonkeyPatch, fast_path: bool, streamed: bool
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    key = f"sk-proxy-{fast_path}-{streamed}"
    config = LLMConfig(model="openai/gpt-4o-mini", api_key=key, api_base=fake_llm.base_url, fast_path=fast_path)
    assert await answer(config, streamed) == "echo: hello"
    assert proxy.seen == [f"POST {fake_llm.base_url}/chat/completions"]


@PATHS
async def test_no_proxy_sends_calls_direct(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, fast_path: bool) -> None:
    monkeypatch.setenv("HTTP_PROXY", dead_url().removesuffix("/v1"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    key = f"sk-noproxy-{fast_path}"
    config = LLMConfig(model="openai/gpt-4o-mini", api_key=key, api_base=fake_llm.base_url, fast_path=fast_path)
    assert await answer(config) == "echo: hello"


@PATHS
async def test_a_dead_proxy_is_a_failure_the_user_is_told_about(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, fast_path: bool
) -> None:
    monkeypatch.setenv("HTTP_PROXY", dead_url().removesuffix("/v1"))
    key = f"sk-deadproxy-{fast_path}"
    config = LLMConfig(model="openai/gpt-4o-mini", api_key=key, api_base=fake_llm.base_url, fast_path=fast_path)
    with pytest.raises(ProviderUnreachable):
        await answer(config)
    assert fake_llm.requests == []


@PATHS
@pytest.mark.parametrize("streamed", [False, True])
async def test_extra_headers_reach_the_endpoint(fake_llm: FakeLLM, fast_path: bool, streamed: bool) -> None:
    headers = {"HTTP-Referer": "https://relaybot.example", "X-Title": "relaybot"}
    config = LLMConfig(
        model="openai/gpt-4o-mini",
        api_key="sk-test",
        api_base=fake_llm.base_url,
        fast_path=fast_path,
        extra_headers=headers,
    )
    assert await answer(config, streamed) == "echo: hello"
    seen = fake_llm.headers[-1]
    assert {name: seen.get(name) for name in headers} == headers
    assert seen["Authorization"] == "Bearer sk-test"


@pytest.fixture
async def https_llm(tmp_path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[FakeLLM, str]]:
    """The fake over HTTPS with a certificate from a throwaway CA, and that CA's file; the TLS context is reloaded."""
    pytest.importorskip("cryptography")
    from bot.net.tls import client_context
    from tests.fakes.tls import server_context

    context, ca_file = server_context(tmp_path)
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    client_context.cache_clear()
    async with FakeLLM(tls=context) as fake:
        yield fake, str(ca_file)
    client_context.cache_clear()


@PATHS
async def test_the_ca_bundle_comes_from_ssl_cert_file(
    https_llm: tuple[FakeLLM, str], monkeypatch: pytest.MonkeyPatch, fast_path: bool
) -> None:
    fake, ca_file = https_llm
    monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    key = f"sk-tls-{fast_path}"
    config = LLMConfig(model="openai/gpt-4o-mini", api_key=key, api_base=fake.base_url, fast_path=fast_path)
    assert await answer(config) == "echo: hello"


@PATHS
async def test_an_unknown_certificate_authority_is_refused(https_llm: tuple[FakeLLM, str], fast_path: bool) -> None:
    fake, _ = https_llm
    key = f"sk-untrusted-{fast_path}"
    config = LLMConfig(model="openai/gpt-4o-mini", api_key=key, api_base=fake.base_url, fast_path=fast_path)
    with pytest.raises(ProviderError):
        await answer(config)
    assert fake.requests == []


@PATHS
async def test_without_ssl_cert_file_certifis_bundle_is_used(
    https_llm: tuple[FakeLLM, str], monkeypatch: pytest.MonkeyPatch, fast_path: bool
) -> None:
    import certifi

    fake, ca_file = https_llm
    monkeypatch.setattr(certifi, "where", lambda: ca_file)
    key = f"sk-certifi-{fast_path}"
    config = LLMConfig(model="openai/gpt-4o-mini", api_key=key, api_base=fake.base_url, fast_path=fast_path)
    assert await answer(config) == "echo: hello"
