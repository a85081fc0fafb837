"""One person on Telegram and Discord: one role, one budget, one DM memory, one name in the ledger."""

import json
from pathlib import Path

from typer.testing import CliRunner

from bot.cli.main import app
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import GatewayUnderTest

ALICE_TELEGRAM, ALICE_DISCORD = 123, 456


def sections(telegram: FakeTelegram, discord: FakeDiscord) -> dict[str, dict]:
    return {
        "telegram": {"enabled": True, "token": telegram.token, "api_base": telegram.base_url},
        "discord": {
            "enabled": True,
            "token": discord.token,
            "api_base": discord.api_base,
            "gateway_url": discord.gateway_url,
        },
    }


def system_prompt(request: dict) -> str:
    return str(request["messages"][0]["content"])


async def test_one_person_on_two_apps_shares_role_budget_memory_and_ledger_name(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, discord: FakeDiscord
) -> None:
    identities = {"alice": [f"telegram:{ALICE_TELEGRAM}", f"discord:{ALICE_DISCORD}"]}
    overrides = {
        "identities": identities,
        "roles": {"alice": "admin"},
        "budgets": {"senders": {"alice": {"monthly_tokens": 1}}},
    }
    fake_llm.script(Text("hi on telegram"))
    async with GatewayUnderTest(tmp_path, fake_llm, ["telegram:42"], sections(telegram, discord), **overrides) as bot:
        await bot.gateway.manager.ready("telegram")
        await bot.gateway.manager.ready("discord")
        telegram.text("hello from telegram", chat_id=ALICE_TELEGRAM, user_id=ALICE_TELEGRAM)
        await telegram.wait_for_sent(1)
        discord.dm("hello from discord", user_id=ALICE_DISCORD)
        (refusal,) = await discord.wait_for_sent(1)
    (request,) = fake_llm.requests  # the telegram turn used alice's budget up: discord is refused before a call
    assert "memory/people/alice/MEMORY.md" in system_prompt(request)
    assert "read_file" in {tool["function"]["name"] for tool in request["tools"]}  # the admin's tools
    assert "monthly token budget" in refusal["content"]
    config = tmp_path / "config.yaml"
    config.write_text(f"workspace: {bot.config.workspace}\nstate_dir: {bot.config.state_dir}\n")
    result = CliRunner().invoke(app, ["--config", str(config), "usage", "--json", "--by", "sender"])
    assert result.exit_code == 0, result.output
    (group,) = json.loads(result.output)
    assert (group["key"], group["calls"]) == ("alice", 1)
