"""A backup taken while the gateway answers a burst of messages restores into a fresh home that carries on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.cli_process import run_cli
from tests.support.gateway_process import GatewayProcess
from tests.support.polling import until

OWNER = 42
STRANGER = 77


async def test_backup_during_a_burst_restores_sessions_memory_cron_pairing_and_ledger(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    home = tmp_path / "home"
    bot = GatewayProcess(home, fake_llm, telegram, [OWNER])
    (home / "workspace" / "memory").mkdir(parents=True)
    (home / "workspace" / "memory" / "MEMORY.md").write_text("The owner's cat is called Quill.\n")
    await bot.start()
    telegram.text("my locker code is zebra-1187", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_sent(1, timeout=60)
    telegram.text("hello?", chat_id=STRANGER, user_id=STRANGER)  # gets a pairing code
    await telegram.wait_for_sent(2, timeout=60)
    code, _, _ = await run_cli(home, "cron", "add", "--to", f"telegram:{OWNER}", "--every", "1d", "--remind", "stretch")
    assert code == 0

    for n in range(20):
        telegram.text(f"burst {n}", chat_id=OWNER, user_id=OWNER)
    archive = tmp_path / "b.tar.gz"
    code, out, err = await run_cli(home, "backup", "create", str(archive))
    assert code == 0, err
    await until(lambda: any("burst 19" in sent["text"] for sent in telegram.sent), 120)
    await bot.stop()

    code, out, err = await run_cli(home, "backup", "verify", str(archive))
    assert code == 0 and out.startswith("OK: "), err
    fresh = tmp_path / "fresh"
    code, out, err = await run_cli(fresh, "backup", "restore", str(archive), "--home", str(fresh))
    assert code == 0, err
    assert (fresh / "workspace" / "memory" / "MEMORY.md").read_text() == "The owner's cat is called Quill.\n"
    code, out, _ = await run_cli(fresh, "cron", "list")
    assert "stretch" in out
    code, out, _ = await run_cli(fresh, "pairing", "list")
    assert f"user {STRANGER}" in out
    code, out, _ = await run_cli(fresh, "usage", "--json")
    assert sum(row["calls"] for row in json.loads(out)) >= 1

    code, _, err = await run_cli(fresh, "backup", "restore", str(archive), "--home", str(fresh))
    assert code == 1 and "not empty" in err

    restored = GatewayProcess(fresh, fake_llm, telegram, [OWNER])
    await restored.start()
    sent = len(telegram.sent)
    telegram.text("what is my locker code?", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_sent(sent + 1, timeout=60)
    await restored.stop()
    prompt = json.dumps(fake_llm.requests[-1]["messages"])
    assert "zebra-1187" in prompt and "Quill" in prompt


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` by its relative path, with its bytes."""
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


async def test_a_home_with_two_further_agents_restores_every_workspace(tmp_path: Path, fake_llm: FakeLLM) -> None:
    home, fresh = tmp_path / "home", tmp_path / "fresh"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"llm: {{model: openai/fake-model, api_key: sk-test, api_base: '{fake_llm.base_url}'}}\n"
        "agents:\n  - name: work\n  - name: family\n"
    )
    for folder, memory in [("workspace", "main facts"), ("agents/work", "the Q3 plan"), ("agents/family", "birthdays")]:
        (home / folder / "memory").mkdir(parents=True)
        (home / folder / "memory" / "MEMORY.md").write_text(f"{memory}\n")
        (home / folder / "memory" / "HISTORY.md").write_text(f"[2026-12-01] talked about {memory}\n")
        (home / folder / "SOUL.md").write_text(f"I keep {memory}.\n")
    (home / "agents" / "work" / "files").mkdir()
    (home / "agents" / "work" / "files" / "report.pdf").write_bytes(b"%PDF-1.7 received")

    code, _, err = await run_cli(home, "backup", "create", str(tmp_path / "b.tar.gz"))
    assert code == 0, err
    code, _, err = await run_cli(fresh, "backup", "restore", str(tmp_path / "b.tar.gz"), "--home", str(fresh))
    assert code == 0, err
    for folder in ("workspace", "agents/work", "agents/family"):
        assert tree(fresh / folder) == tree(home / folder), folder
    assert (fresh / "agents" / "work" / "files" / "report.pdf").read_bytes() == b"%PDF-1.7 received"
