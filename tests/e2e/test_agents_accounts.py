"""Two Telegram bots on one gateway answering as two agents: each bot bound to its own agent, with its own soul,
model, sessions and memory; the user is the same person on both."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER
from tests.support.harness import GatewayUnderTest

WORK_TOKEN = "777:WORK-TOKEN"
AGENTS = {
    "agents": [{"name": "work", "llm": {"model": "openai/work-model"}}],
    "bindings": [{"agent": "work", "channel": "telegram", "account": "work"}],
}


async def test_two_telegram_bots_answer_as_two_agents_with_memories_apart(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "SOUL.md").write_text("You are Homey, the family assistant.")
    (tmp_path / "workspace" / "memory").mkdir()
    (tmp_path / "workspace" / "memory" / "MEMORY.md").write_text("The family dog is called Rex.")
    work_workspace = tmp_path / "agents" / "work"
    (work_workspace / "memory").mkdir(parents=True)
    (work_workspace / "SOUL.md").write_text("You are Worky, the work assistant.")
    (work_workspace / "memory" / "MEMORY.md").write_text("The office wifi password rotates on Mondays.")
    async with FakeTelegram(WORK_TOKEN, bot_id=998, bot_username="work_bot") as work_bot:
        section = {
            "enabled": True,
            "token": telegram.token,
            "api_base": telegram.base_url,
            "accounts": [{"name": "work", "token": work_bot.token, "api_base": work_bot.base_url}],
        }
        async with GatewayUnderTest(tmp_path, fake_llm, [f"telegram:{OWNER}"], {"telegram": section}, **AGENTS) as bot:
            telegram.text("what is the dog called?", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_for_sent(1)
            work_bot.text("when does the wifi change?", chat_id=OWNER, user_id=OWNER)
            await work_bot.wait_for_sent(1)
            work_bot.text("/agent", chat_id=OWNER, user_id=OWNER)
            await work_bot.wait_for_sent(2)
            telegram.text("/agent", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_for_sent(2)
            built = list(bot.gateway.roster.built)

    family_call, work_call = fake_llm.requests
    assert family_call["model"] == "fake-model" and work_call["model"] == "work-model"
    family_prompt, work_prompt = str(family_call["messages"][0]), str(work_call["messages"][0])
    assert "Homey" in family_prompt and "Rex" in family_prompt
    assert "Worky" not in family_prompt and "wifi" not in family_prompt
    assert "Worky" in work_prompt and "wifi" in work_prompt
    assert "Homey" not in work_prompt and "Rex" not in work_prompt
    assert "dog" not in str(work_call["messages"])
    assert work_bot.sent[1]["text"] == "Agent work answers here, by bindings[0] (telegram (account work))."
    assert telegram.sent[1]["text"].startswith("Agent main answers here: no binding matches this chat")
    assert built == ["main", "work"]
    work_sessions = list((tmp_path / "state" / "agents" / "work" / "sessions").glob("*.jsonl"))
    assert [path.name for path in work_sessions] == [f"telegram%40work%3A{OWNER}.jsonl"]
    assert "wifi" in work_sessions[0].read_text()
    assert all("wifi" not in path.read_text() for path in (tmp_path / "state" / "sessions").glob("*.jsonl"))
