"""The dashboard: owner tokens only, the CLI's services behind it; approving in the browser pairs a stranger."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest_asyncio

from bot.bus import ChatRef, Trust
from bot.dashboard import session_summaries, usage_per_day
from bot.scheduler.schedules import Schedule
from tests.channels.api.browser import needs_chromium, phone_page
from tests.channels.api.conftest import GUEST_TOKEN, OWNER_TOKEN, ApiBot
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.gateway import OWNER

STRANGER = 77


@pytest_asyncio.fixture
async def paired_bot(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> AsyncIterator[ApiBot]:
    """The API channel next to Telegram, whose DMs from strangers need pairing."""
    section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}
    async with ApiBot(tmp_path, fake_llm, [f"telegram:{OWNER}"], {"telegram": section}) as bot:
        await bot.gateway.manager.ready("telegram")
        yield bot


async def test_admin_needs_an_owner_token(api_bot: ApiBot) -> None:
    async with aiohttp.ClientSession() as http:
        for query in ("", "?token=nope", f"?token={GUEST_TOKEN}"):
            for path in ("/admin", "/admin/state"):
                async with http.get(f"{api_bot.url}{path}{query}") as response:
                    assert response.status == 401, (path, query)
        async with http.get(f"{api_bot.url}/admin?token={OWNER_TOKEN}") as response:
            assert response.status == 200 and "relaybot dashboard" in await response.text()


async def test_state_and_cron_actions_use_the_gateways_services(api_bot: ApiBot) -> None:
    cron = api_bot.gateway.cron
    chat = ChatRef("api", "me", "default")
    job = cron.add(Schedule("every", "1h", "UTC"), chat, "remind", "stretch", "stretch", Trust.OWNER)
    auth = {"Authorization": f"Bearer {OWNER_TOKEN}"}
    async with aiohttp.ClientSession(headers=auth) as http:
        async with http.get(f"{api_bot.url}/admin/state") as response:
            state = await response.json()
        assert state["channels"] == [{"name": "api", "connected": True}]
        assert [j["id"] for j in state["cron"]] == [job.id]
        assert state["heartbeat"]["enabled"] is True
        async with http.post(f"{api_bot.url}/admin/action", json={"op": "cron.remove", "id": job.id}) as response:
            assert response.status == 200 and (await response.json()) == {"ok": True}
        async with http.post(f"{api_bot.url}/admin/action", json={"op": "cron.run", "id": job.id}) as response:
            assert response.status == 400 and (await response.json())["error"] == "no such job"
    assert cron.jobs() == []


def test_usage_per_day_comes_from_session_totals(tmp_path: Path) -> None:
    day1, day2 = 1_790_000_000, 1_790_000_000 + 86400
    lines = [
        {"type": "message", "ts": day1, "message": {"role": "user", "content": "a"}},
        {"type": "usage", "prompt": 100, "completion": 20},
        {"type": "message", "ts": day2, "message": {"role": "user", "content": "b"}},
        {"type": "usage", "prompt": 50, "completion": 5},
    ]
    (tmp_path / "telegram%3A1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines) + "{torn")
    [summary] = session_summaries(tmp_path, since=0)
    assert (summary["key"], summary["messages"], summary["tokens"]) == ("telegram:1", 2, 175)
    assert usage_per_day([summary]) == [{"day": "2026-09-21", "tokens": 120}, {"day": "2026-09-22", "tokens": 55}]


@needs_chromium
async def test_approving_a_code_on_the_dashboard_lets_the_stranger_in(
    paired_bot: ApiBot, telegram: FakeTelegram
) -> None:
    telegram.text("hello?", chat_id=STRANGER, user_id=STRANGER, first_name="Stranger")
    (sent,) = await telegram.wait_for_sent(1)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", sent["text"]).group(1)
    async with phone_page() as page:
        await page.goto(f"{paired_bot.url}/admin?token={OWNER_TOKEN}")
        assert "token" not in page.url
        row = page.locator("#pending tr", has_text=code)
        await row.get_by_role("button", name="Approve").click()
        await page.wait_for_selector("#approved td:has-text('77')")
        assert await page.locator("#pending", has_text=code).count() == 0
        await page.wait_for_selector("#usage svg")
    telegram.text("now?", chat_id=STRANGER, user_id=STRANGER)
    replies = await telegram.wait_for_sent(2)
    assert replies[1]["chat_id"] == STRANGER and replies[1]["text"].endswith("now?")
