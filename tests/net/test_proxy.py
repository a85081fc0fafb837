import pytest

from bot.net.proxy import ProxyBook, proxy_for

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_the_scheme_proxy_applies_unless_no_proxy_exempts_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "bot-api.example")
    assert proxy_for("https://example.com/v1") == "http://proxy.internal:3128"
    assert proxy_for("https://bot-api.example/bot1/getMe") is None
    assert proxy_for("http://example.com/") is None


def test_all_proxy_covers_every_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "http://proxy.internal:3128")
    assert proxy_for("http://example.com/") == "http://proxy.internal:3128"


def test_the_book_reads_the_environment_once_per_host(monkeypatch: pytest.MonkeyPatch) -> None:
    book = ProxyBook()
    monkeypatch.setenv("HTTPS_PROXY", "http://first:3128")
    assert book("https://example.com/a") == "http://first:3128"
    monkeypatch.setenv("HTTPS_PROXY", "http://second:3128")
    assert book("https://example.com/b") == "http://first:3128"
    assert book("https://other.example/") == "http://second:3128"
