"""The front door for scripts and browsers: no tokens in URLs, a cookie login, Origin and CSRF checks, headers."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from bot.bus import ChatRef, Trust
from bot.config.channels.api import ApiConfig
from bot.scheduler.schedules import Schedule
from channels.api.web.auth import Caller
from channels.api.web.front_door import SECURITY_HEADERS
from channels.api.web.sessions import COOKIE, WebSessions, set_cookie
from tests.channels.api.conftest import GUEST_TOKEN, OWNER_TOKEN, ApiBot, bearer
from tests.fakes.openai_server import FakeLLM, Text

FOREIGN = "http://evil.example"


def cookie_session() -> aiohttp.ClientSession:
    """A client that keeps cookies set by 127.0.0.1, as a browser does."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def log_in(http: aiohttp.ClientSession, bot: ApiBot, token: str = OWNER_TOKEN) -> dict:
    async with http.post(f"{bot.url}/login", data={"token": token}) as response:
        assert response.status == 200, await response.text()
        return await response.json()


async def reply_to(ws: aiohttp.ClientWebSocketResponse, text: str) -> str:
    await ws.send_json({"type": "message", "text": text, "id": "c1"})
    while True:
        frame = await ws.receive_json(timeout=10)
        if frame["type"] in ("message", "error"):
            return frame.get("text", frame.get("message"))


async def test_login_sets_an_httponly_samesite_strict_cookie_that_opens_the_chat(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("hello by cookie"))
    async with cookie_session() as http:
        async with http.post(f"{api_bot.url}/login", data={"token": OWNER_TOKEN}) as response:
            assert response.status == 200
            cookie = response.headers["Set-Cookie"]
            body = await response.json()
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert "Secure" not in cookie  # plain http on loopback; Secure comes with TLS
        assert OWNER_TOKEN not in cookie
        assert body["name"] == "me" and body["owner"] is True and len(body["csrf"]) >= 32
        async with http.get(f"{api_bot.url}/session") as response:
            assert (await response.json())["csrf"] == body["csrf"]
        async with http.ws_connect(api_bot.ws_url) as ws:
            assert (await ws.receive_json(timeout=5))["state"] == "connected"
            assert await reply_to(ws, "hi") == "hello by cookie"


async def test_a_token_in_the_first_frame_opens_the_chat(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("hello by frame"))
    async with aiohttp.ClientSession() as http, http.ws_connect(api_bot.ws_url) as ws:
        await ws.send_json({"type": "auth", "token": GUEST_TOKEN})
        hello = await ws.receive_json(timeout=5)
        assert hello["state"] == "connected" and hello["session"] == "default"
        assert await reply_to(ws, "hi") == "hello by frame"


@pytest.mark.parametrize("path", ["/", "/admin", "/session", "/history", "/v1/models", "/admin/state", "/ws"])
async def test_tokens_in_urls_are_refused(api_bot: ApiBot, path: str) -> None:
    async with aiohttp.ClientSession() as http, http.get(f"{api_bot.url}{path}?token={OWNER_TOKEN}") as response:
        assert response.status == 400
        assert "not accepted in URLs" in await response.text()


async def test_wrong_login_tokens_count_against_the_lockout(api_bot: ApiBot) -> None:
    async with cookie_session() as http:
        for _ in range(5):
            async with http.post(f"{api_bot.url}/login", data={"token": "guess"}) as response:
                assert response.status == 401
        async with http.post(f"{api_bot.url}/login", data={"token": OWNER_TOKEN}) as response:
            assert response.status == 429
        assert not http.cookie_jar.filter_cookies(api_bot.url)


async def test_wrong_first_frame_tokens_count_against_the_lockout(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(5):
            async with http.ws_connect(api_bot.ws_url) as ws:
                await ws.send_json({"type": "auth", "token": "guess"})
                assert (await ws.receive_json(timeout=5))["type"] == "error"
                closing = await ws.receive(timeout=5)
                assert closing.type is aiohttp.WSMsgType.CLOSE and closing.data == aiohttp.WSCloseCode.POLICY_VIOLATION
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(api_bot.ws_url)
        assert refused.value.status == 429
        async with http.post(f"{api_bot.url}/login", data={"token": OWNER_TOKEN}) as response:
            assert response.status == 429


async def test_a_first_frame_that_is_not_auth_closes_the_socket(api_bot: ApiBot, fake_llm: FakeLLM) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(api_bot.ws_url) as ws:
        await ws.send_json({"type": "message", "text": "hi"})
        assert "auth" in (await ws.receive_json(timeout=5))["message"]
        assert (await ws.receive(timeout=5)).type is aiohttp.WSMsgType.CLOSE
    assert fake_llm.requests == []


async def test_pages_of_other_origins_are_refused_even_with_a_valid_token(api_bot: ApiBot, fake_llm) -> None:
    cron = api_bot.gateway.cron
    job = cron.add(Schedule("every", "1h", "UTC"), ChatRef("api", "me", "default"), "r", "stretch", "r", Trust.OWNER)
    foreign = {"Origin": FOREIGN}
    async with cookie_session() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(api_bot.ws_url, headers={**foreign, **bearer(OWNER_TOKEN)})
        assert refused.value.status == 403
        async with http.post(f"{api_bot.url}/login", data={"token": OWNER_TOKEN}, headers=foreign) as response:
            assert response.status == 403
        csrf = (await log_in(http, api_bot))["csrf"]
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(api_bot.ws_url, headers=foreign)
        assert refused.value.status == 403
        action = {"op": "cron.remove", "id": job.id}
        headers = {**foreign, "X-CSRF-Token": csrf}
        async with http.post(f"{api_bot.url}/admin/action", json=action, headers=headers) as response:
            assert response.status == 403
    assert [j.id for j in cron.jobs()] == [job.id]
    assert fake_llm.requests == []


async def test_admin_posts_by_cookie_need_the_sessions_csrf_token(api_bot: ApiBot) -> None:
    cron = api_bot.gateway.cron
    job = cron.add(Schedule("every", "1h", "UTC"), ChatRef("api", "me", "default"), "r", "stretch", "r", Trust.OWNER)
    action = {"op": "cron.remove", "id": job.id}
    async with cookie_session() as http:
        csrf = (await log_in(http, api_bot))["csrf"]
        for headers in ({}, {"X-CSRF-Token": "forged"}):
            async with http.post(f"{api_bot.url}/admin/action", json=action, headers=headers) as response:
                assert response.status == 403
        assert [j.id for j in cron.jobs()] == [job.id]
        async with http.post(f"{api_bot.url}/admin/action", json=action, headers={"X-CSRF-Token": csrf}) as response:
            assert response.status == 200
    assert cron.jobs() == []


async def test_a_guest_session_cannot_use_the_dashboard(api_bot: ApiBot) -> None:
    async with cookie_session() as http:
        csrf = (await log_in(http, api_bot, GUEST_TOKEN))["csrf"]
        async with http.get(f"{api_bot.url}/admin/state") as response:
            assert response.status == 401
        action = {"op": "cron.remove", "id": "x"}
        async with http.post(f"{api_bot.url}/admin/action", json=action, headers={"X-CSRF-Token": csrf}) as response:
            assert response.status == 401


async def test_logout_ends_the_session(api_bot: ApiBot) -> None:
    async with cookie_session() as http:
        csrf = (await log_in(http, api_bot))["csrf"]
        async with http.post(f"{api_bot.url}/logout", headers={"X-CSRF-Token": csrf}) as response:
            assert response.status == 200
        async with http.get(f"{api_bot.url}/session") as response:
            assert response.status == 401


async def test_allowed_origins_admits_a_listed_origin(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("hello, listed page"))
    async with (
        ApiBot(tmp_path, fake_llm, api={"allowed_origins": ["https://chat.example.org"]}) as bot,
        aiohttp.ClientSession() as http,
    ):
        listed = {"Origin": "https://chat.example.org", **bearer(OWNER_TOKEN)}
        async with http.ws_connect(bot.ws_url, headers=listed) as ws:
            await ws.receive_json(timeout=5)
            assert await reply_to(ws, "hi") == "hello, listed page"
        other = {"Origin": "https://other.example.org", **bearer(OWNER_TOKEN)}
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(bot.ws_url, headers=other)
        assert refused.value.status == 403


def test_allowed_origins_must_be_origins() -> None:
    assert ApiConfig(allowed_origins=["http://127.0.0.1:8080", "https://chat.example.org"]).allowed_origins
    for bad in ("chat.example.org", "https://chat.example.org/path", "ftp://x"):
        with pytest.raises(ValueError, match="not an origin"):
            ApiConfig(allowed_origins=[bad])


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/", 200),
        ("GET", "/admin", 200),
        ("GET", "/static/chat.js", 200),
        ("GET", "/static/login.js", 200),
        ("GET", "/session", 401),
        ("GET", "/v1/models", 200),
        ("POST", "/login", 401),
        ("GET", "/nowhere", 404),
    ],
)
async def test_every_response_carries_the_security_headers(
    api_bot: ApiBot, method: str, path: str, status: int
) -> None:
    headers = bearer(OWNER_TOKEN) if path == "/v1/models" else {}
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, f"{api_bot.url}{path}", headers=headers) as response,
    ):
        assert response.status == status
        for name, value in SECURITY_HEADERS.items():
            assert response.headers.get(name) == value, (path, name)
    policy = SECURITY_HEADERS["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "'unsafe-inline'" not in policy
    assert SECURITY_HEADERS["X-Content-Type-Options"] == "nosniff"
    assert SECURITY_HEADERS["Referrer-Policy"] == "no-referrer" and SECURITY_HEADERS["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize(("scheme", "secure"), [("http", False), ("https", True)])
def test_the_cookie_is_secure_when_the_request_came_over_tls(scheme: str, secure: bool) -> None:
    request = make_mocked_request("POST", "/login").clone(scheme=scheme)
    response = web.Response()
    set_cookie(response, request, WebSessions().open(Caller("me", Trust.OWNER, True)))
    morsel = response.cookies[COOKIE]
    assert (bool(morsel["secure"]), morsel["httponly"], morsel["samesite"]) == (secure, True, "Strict")
