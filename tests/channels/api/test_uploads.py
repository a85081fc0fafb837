"""POST /upload: a file with a message, by bearer token or by the web chat's cookie with its CSRF token."""

from __future__ import annotations

import aiohttp

from tests.channels.api.conftest import GUEST_TOKEN, OWNER_TOKEN, ApiBot, bearer
from tests.channels.api.web.test_front_door import cookie_session, log_in
from tests.support.polling import until


def form(name: str | None = "notes.txt", text: str = "read this", session: str | None = None) -> aiohttp.FormData:
    data = aiohttp.FormData()
    if name is not None:
        data.add_field("file", b"line one\nline two\n", filename=name, content_type="text/plain")
    data.add_field("text", text)
    if session is not None:
        data.add_field("session", session)
    return data


async def test_a_scripts_upload_goes_into_its_session_with_the_file_attached(api_bot: ApiBot, fake_llm) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(api_bot.ws_url + "?session=docs") as ws:
        await ws.send_json({"type": "auth", "token": OWNER_TOKEN})
        assert (await ws.receive_json(timeout=5))["session"] == "docs"
        async with http.post(
            f"{api_bot.url}/upload", data=form("../../etc/notes.txt", session="docs"), headers=bearer(OWNER_TOKEN)
        ) as response:
            assert response.status == 202, await response.text()
            sent = await response.json()
        while (frame := await ws.receive_json(timeout=10))["type"] != "message":
            pass
    assert sent["name"] == "notes.txt" and frame["reply_to"] == sent["id"]
    asked = fake_llm.requests[0]["messages"][-1]["content"]
    assert "\nread this\n[attached file f_" in asked and "line two" in asked  # text files are inlined
    [kept] = list((api_bot.config.workspace / "inbox" / "api" / "me").iterdir())
    assert kept.name.endswith("-notes.txt") and kept.read_bytes() == b"line one\nline two\n"
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{api_bot.url}/upload", data=form(None), headers=bearer(GUEST_TOKEN)) as response:
            assert response.status == 400 and "needs a file" in await response.text()
        async with http.post(f"{api_bot.url}/upload", data=form()) as response:
            assert response.status == 401


async def test_a_browsers_upload_needs_its_sessions_csrf_token(api_bot: ApiBot, fake_llm) -> None:
    async with cookie_session() as http:
        session = await log_in(http, api_bot)
        async with http.post(f"{api_bot.url}/upload", data=form()) as response:
            assert response.status == 403 and "X-CSRF-Token" in await response.text()
        headers = {"X-CSRF-Token": session["csrf"]}
        async with http.post(f"{api_bot.url}/upload", data=form(), headers=headers) as response:
            assert response.status == 202
    inbox = api_bot.config.workspace / "inbox" / "api" / "me"
    await until(lambda: inbox.is_dir() and len(list(inbox.iterdir())) == 1, timeout=10)  # filed as its turn starts
