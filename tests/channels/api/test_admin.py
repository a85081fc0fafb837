"""The dashboard: owner tokens only, the CLI's services behind it; approving in the browser pairs a stranger."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio

from bot.bus import ChatRef, Trust
from bot.scheduler.heartbeat import Outcome
from bot.scheduler.schedules import Schedule
from bot.usage.ledger import CallRecord
from tests.channels.api.browser import needs_chromium, phone_page
from tests.channels.api.conftest import GUEST_TOKEN, OWNER_TOKEN, ApiBot, bearer
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER

STRANGER = 77


@pytest_asyncio.fixture
async def paired_bot(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> AsyncIterator[ApiBot]:
    """The API channel next to Telegram, whose DMs from strangers need pairing."""
    section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}
    async with ApiBot(tmp_path, fake_llm, [f"telegram:{OWNER}"], {"telegram": section}) as bot:
        await bot.gateway.manager.ready("telegram")
        yield bot


async def test_admin_state_needs_an_owner_token(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http:
        for headers in ({}, bearer("nope"), bearer(GUEST_TOKEN)):
            async with http.get(f"{api_bot.url}/admin/state", headers=headers) as response:
                assert response.status == 401, headers
        async with http.get(f"{api_bot.url}/admin/state", headers=bearer(OWNER_TOKEN)) as response:
            assert response.status == 200
        async with http.get(f"{api_bot.url}/admin") as response:  # the page holds no data; it asks for a login
            assert response.status == 200 and "relaybot dashboard" in await response.text()


async def test_state_and_cron_actions_use_the_gateways_services(api_bot: ApiBot) -> None:
    cron = api_bot.gateway.cron
    chat = ChatRef("api", "me", "default")
    job = cron.add(Schedule("every", "1h", "UTC"), chat, "remind", "stretch", "stretch", Trust.OWNER)
    auth = {"Authorization": f"Bearer {OWNER_TOKEN}"}
    async with aiohttp.ClientSession(headers=auth) as http:
        async with http.get(f"{api_bot.url}/admin/state") as response:
            state = await response.json()
        [api] = state["channels"]
        assert (api["name"], api["connected"], api["state"], api["last_error"]) == ("api", True, "connected", None)
        assert [j["id"] for j in state["cron"]] == [job.id]
        assert state["heartbeat"]["enabled"] is True
        async with http.post(f"{api_bot.url}/admin/action", json={"op": "cron.remove", "id": job.id}) as response:
            assert response.status == 200 and (await response.json()) == {"ok": True}
        async with http.post(f"{api_bot.url}/admin/action", json={"op": "cron.run", "id": job.id}) as response:
            assert response.status == 400 and (await response.json())["error"] == "no such job"
    assert cron.jobs() == []


async def test_usage_per_day_and_session_tokens_come_from_the_ledger(api_bot: ApiBot) -> None:
    now = time.time()
    ledger = api_bot.gateway.agent.ledger
    for ts, key, prompt, completion in [(now - 86400, "api:me:default", 100, 20), (now, "api:me:default", 50, 5)]:
        ledger.record(CallRecord(ts, key, "api:me", "turn", "m", prompt, completion, 0, None, False, 0.1, "ok"))
    ledger.record(CallRecord(now - 30 * 86400, "api:me:default", "api:me", "turn", "m", 9, 9, 0, None, False, 0, "ok"))
    lines = [{"type": "message", "ts": now, "message": {"role": "user", "content": "a"}}, {"type": "usage"}]
    sessions = api_bot.gateway.config.state_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / "api%3Ame%3Adefault.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines) + "{torn")
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {OWNER_TOKEN}"}) as http,
        http.get(f"{api_bot.url}/admin/state") as response,
    ):
        state = await response.json()
    today, yesterday = (datetime.fromtimestamp(t, UTC).date().isoformat() for t in (now, now - 86400))
    assert state["usage"] == [{"day": yesterday, "tokens": 120}, {"day": today, "tokens": 55}]
    [session] = [s for s in state["sessions"] if s["key"] == "api:me:default"]
    assert (session["messages"], session["tokens"]) == (1, 175)


async def test_channel_rows_count_messages_and_heartbeat_shows_its_last_run(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("hi back"))
    auth = {"Authorization": f"Bearer {OWNER_TOKEN}"}
    async with aiohttp.ClientSession(headers=auth) as http:
        body = {"model": "relaybot", "messages": [{"role": "user", "content": "hi"}]}
        async with http.post(f"{api_bot.url}/v1/chat/completions", json=body) as response:
            assert response.status == 200
        assert await api_bot.gateway.heartbeat.tick() is Outcome.NOTHING_TO_DO
        async with http.get(f"{api_bot.url}/admin/state") as response:
            state = await response.json()
    [api] = state["channels"]
    assert (api["messages_in"], api["messages_out"]) == (1, 1)
    assert api["since"] <= time.time() and api["failures"] == 0
    assert state["heartbeat"]["last_outcome"] == Outcome.NOTHING_TO_DO.value
    assert state["heartbeat"]["last_run"] == pytest.approx(time.time(), abs=60)


@needs_chromium
async def test_approving_a_code_on_the_dashboard_lets_the_stranger_in(
    paired_bot: ApiBot, telegram: FakeTelegram
) -> None:
    telegram.text("hello?", chat_id=STRANGER, user_id=STRANGER, first_name="Stranger")
    (sent,) = await telegram.wait_for_sent(1)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", sent["text"]).group(1)
    async with phone_page() as page:
        await page.goto(f"{paired_bot.url}/admin")
        await page.fill("#token", OWNER_TOKEN)
        await page.click("#login button")
        row = page.locator("#pending tr", has_text=code)
        await row.get_by_role("button", name="Approve").click()
        await page.wait_for_selector("#approved td:has-text('77')")
        assert await page.locator("#pending", has_text=code).count() == 0
        await page.wait_for_selector("#usage svg")
    telegram.text("now?", chat_id=STRANGER, user_id=STRANGER)
    replies = await telegram.wait_for_sent(2)
    assert replies[1]["chat_id"] == STRANGER and replies[1]["text"].endswith("now?")


@needs_chromium
async def test_a_reply_to_a_blocked_chat_is_listed_on_the_dashboard_and_retried_there(
    paired_bot: ApiBot, telegram: FakeTelegram, fake_llm: FakeLLM
) -> None:
    telegram.fail("sendMessage", status=403, description="Forbidden: bot was blocked by the user")
    fake_llm.script(Text("Otters hold hands while they sleep."))
    telegram.text("tell me about otters", chat_id=OWNER, user_id=OWNER)
    (notice,) = await telegram.wait_for_sent(1)  # the owner is told; the reply itself waits as a dead letter
    assert "relaybot queue list" in notice["text"]
    async with phone_page() as page:
        await page.goto(f"{paired_bot.url}/admin")
        await page.fill("#token", OWNER_TOKEN)
        await page.click("#login button")
        row = page.locator("#dead tr", has_text="Forbidden: bot was blocked by the user")
        await row.get_by_role("button", name="Retry").click()
        await page.wait_for_selector("#state:has-text('done')")
        assert await page.locator("#dead tr", has_text="Otters").count() == 0
    replies = await telegram.wait_for_sent(2)
    assert replies[1]["text"] == "Otters hold hands while they sleep."
