"""`relaybot agents`, and `--agent` on usage and pairing: each agent's own ledger and approvals."""

import time
from pathlib import Path

from typer.testing import CliRunner

from bot.access.pairing import PairingBook
from bot.cli.main import app
from bot.usage.ledger import CallRecord, UsageLedger
from tests.support.cli_process import env_for

CONFIG = """\
llm: {model: openai/top-model}
agents:
  - name: work
    llm: {model: openai/work-model, api_base: "http://127.0.0.1:8081/v1"}
bindings:
  - {agent: work, channel: discord, server: "77"}
  - {agent: work, channel: telegram, chat: "-100", thread: "7"}
"""


def home_with_agents(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "config.yaml").write_text(CONFIG)
    return env_for(tmp_path)


def call(cost: float) -> CallRecord:
    return CallRecord(time.time(), "telegram:1", "telegram:1", "chat", "work-model", 10, 5, 0, cost, False, 0.1, "ok")


def test_agents_lists_each_agent_its_chats_and_the_bindings_most_specific_first(tmp_path: Path) -> None:
    env = home_with_agents(tmp_path)
    sessions = tmp_path / "state" / "agents" / "work" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "discord%3A555.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    result = CliRunner().invoke(app, ["agents"], env=env)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("main") and "top-model" in lines[0]
    assert lines[1].startswith("work") and "work-model at http://127.0.0.1:8081/v1" in lines[1]
    assert str(tmp_path / "agents" / "work") in lines[1]
    assert any(line.startswith("  discord:555 (") for line in lines)
    assert "  bindings[1] telegram chat -100 thread 7 -> work" in lines
    assert lines.index("  bindings[1] telegram chat -100 thread 7 -> work") < lines.index(
        "  bindings[0] discord server 77 -> work"
    )
    assert lines[-1] == "  anything else -> main"


def test_usage_and_pairing_read_one_agents_own_books(tmp_path: Path) -> None:
    env = home_with_agents(tmp_path)
    work_state = tmp_path / "state" / "agents" / "work"
    ledger = UsageLedger(work_state / "usage.db")
    ledger.record(call(0.25))
    ledger.close()
    code, _ = PairingBook(work_state / "pairing.json").request("telegram", "555", "Bo")
    runner = CliRunner()
    work = runner.invoke(app, ["usage", "--agent", "work", "--by", "model"], env=env)
    assert work.exit_code == 0 and "work-model" in work.output and "0.25" in work.output
    main = runner.invoke(app, ["usage", "--by", "model"], env=env)
    assert main.exit_code == 0 and "work-model" not in main.output
    assert code in runner.invoke(app, ["pairing", "list", "--agent", "work"], env=env).output
    assert code not in runner.invoke(app, ["pairing", "list"], env=env).output
    approved = runner.invoke(app, ["pairing", "approve", code], env=env)  # found with the agent it is pending at
    assert approved.exit_code == 0 and "Approved telegram user 555 for agent work." in approved.output
    assert PairingBook(work_state / "pairing.json").is_approved("telegram", "555")
    by_agent = runner.invoke(app, ["usage", "--by", "agent"], env=env)
    assert by_agent.exit_code == 0, by_agent.output
    rows = [line.split() for line in by_agent.output.splitlines()]
    assert rows[0][0] == "agent" and rows[2][:2] == ["work", "1"] and rows[3][:2] == ["main", "0"]
    unknown = runner.invoke(app, ["usage", "--agent", "ghost"], env=env)
    assert unknown.exit_code == 2 and "no agent 'ghost'; agents: main, work" in unknown.output
