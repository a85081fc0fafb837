"""Issue 39's "two Telegram bots on one gateway answering as two agents with separate memory", end to end:
python-telegram-bot against two fake Bot APIs, a binding by account, and the fake LLM."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_bot_accounts import WORK_TOKEN, said, two_telegram_bots
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.gateway import OWNER
from tests.harness import GatewayUnderTest


def workspace(folder: Path, soul: str, memory: str) -> None:
    """An agent's workspace with its own SOUL.md and MEMORY.md."""
    (folder / "memory").mkdir(parents=True, exist_ok=True)
    (folder / "SOUL.md").write_text(soul)
    (folder / "memory" / "MEMORY.md").write_text(memory)


def system_prompt(request: dict) -> str:
    return str(request["messages"][0]["content"])


async def test_two_telegram_bots_answer_as_two_agents_with_separate_memory(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    workspace(tmp_path / "workspace", "You are Homey, the family assistant.", "The family dog is called Rex.")
    workspace(tmp_path / "agents" / "work", "You are Worky, the work assistant.", "The office opens at nine.")
    async with FakeTelegram(WORK_TOKEN, bot_id=998, bot_username="work_bot") as work:
        channels = {"telegram": two_telegram_bots(telegram, work)}
        agents = [{"name": "work", "llm": {"model": "openai/work-model"}}]
        bindings = [{"agent": "work", "channel": "telegram", "account": "work"}]
        owners = [f"telegram:{OWNER}"]
        async with GatewayUnderTest(tmp_path, fake_llm, owners, channels, agents=agents, bindings=bindings):
            telegram.text("what is the dog called?", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_for_sent(1)
            work.text("when does the office open?", chat_id=OWNER, user_id=OWNER)
            await work.wait_for_sent(1)
            telegram.text("and its breed?", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_for_sent(2)
    family, office, family_again = fake_llm.requests
    assert [r["model"] for r in fake_llm.requests] == ["fake-model", "work-model", "fake-model"]
    assert "Homey" in system_prompt(family) and "Rex" in system_prompt(family)
    assert "Worky" not in system_prompt(family) and "nine" not in system_prompt(family)
    assert "Worky" in system_prompt(office) and "nine" in system_prompt(office)
    assert "Homey" not in system_prompt(office) and "Rex" not in system_prompt(office)
    assert "dog" not in str(office["messages"]) and "office" not in str(family_again["messages"])
    assert [said(s) for s in telegram.sent] == ["what is the dog called?", "and its breed?"]
    assert [said(s) for s in work.sent] == ["when does the office open?"]
    # each agent keeps the owner's conversation with its own bot in its own state
    work_sessions = list((tmp_path / "state" / "agents" / "work" / "sessions").glob("*.jsonl"))
    assert [path.name for path in work_sessions] == ["telegram%40work%3A42.jsonl"]
    assert "office" in work_sessions[0].read_text()
    main_sessions = list((tmp_path / "state" / "sessions").glob("*.jsonl"))
    assert [path.name for path in main_sessions] == ["telegram%3A42.jsonl"]
    assert "office" not in main_sessions[0].read_text()
