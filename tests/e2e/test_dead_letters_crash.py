"""SIGKILL a real `relaybot run` while it retries dead letters, restart it, and count: each message answered (twice
only by a send in flight at the kill), each apology sent once, no reply regenerated, no dead letter left."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

from bot.bus.dead_letters import DeadLetter, list_dead
from tests.fakes.openai_server import Error, FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.cli_process import run_cli
from tests.support.gateway_process import GatewayProcess
from tests.support.polling import until

OWNER = 42
BLOCKED = "Forbidden: bot was blocked by the user"
REFUSED = Error(401, "Incorrect API key provided")


def dead(bot: GatewayProcess) -> list[DeadLetter]:
    """The dead letters in the home's journal, read beside the running gateway (SQLite in WAL mode)."""
    path = bot.state / "journal.db"
    if not path.exists():
        return []
    db = sqlite3.connect(path, timeout=30)
    try:
        return list_dead(db)
    finally:
        db.close()


def answered(telegram: FakeTelegram) -> Counter[int]:
    """How many answers (the fake model's echoes) each chat received."""
    return Counter(int(sent["chat_id"]) for sent in telegram.sent if sent["text"].startswith("echo: "))


def sends(telegram: FakeTelegram) -> int:
    return sum(1 for method, _ in telegram.calls if method.lower() == "sendmessage")


async def test_a_kill_while_dead_letters_are_retried_loses_nothing_and_sends_nothing_twice(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    refused, blocked = [101, 102, 103, 104], [105, 106]
    owners = [OWNER, *refused, *blocked]  # every sender is let in
    bot = GatewayProcess(tmp_path, fake_llm, telegram, owners, ops={"dead_letter_notice": False})
    await bot.start()

    # two replies the platform refuses (the bot was blocked), then four turns whose model call is refused
    telegram.fail("sendMessage", status=403, description=BLOCKED, times=2)
    for chat in blocked:
        telegram.text(f"k{chat}x0", chat_id=chat, user_id=chat)
    await until(lambda: len(dead(bot)) == 2, 60)
    fake_llm.script(*[REFUSED] * len(refused))
    for chat in refused:
        telegram.text(f"k{chat}x0", chat_id=chat, user_id=chat)
    await until(lambda: len(dead(bot)) == 6, 60)
    await telegram.wait_for_sent(len(refused), timeout=60)  # one apology each
    assert {letter.direction for letter in dead(bot)} == {"in", "out"}

    # retried through the running gateway; killed once the first retried send is on its way (a re-sent reply),
    # most likely while the retried turns wait on the slowed model: they run again after the restart
    fake_llm.latency = 0.5
    telegram.hold("sendMessage")
    before, sent_before = len(telegram.calls), sends(telegram)
    code, out, err = await run_cli(tmp_path, "queue", "retry", "--all")
    assert (code, out) == (0, "Retried 6 dead letters (now).\n"), err
    await telegram.wait_for_call("sendMessage", sent_before + 1, timeout=60)
    await bot.kill()
    in_flight = {
        int(fields["chat_id"]) for method, fields in telegram.calls[before:] if method.lower() == "sendmessage"
    }
    telegram.release("sendMessage")
    fake_llm.latency = 0.0
    await bot.start()

    chats = set(refused + blocked)
    await until(lambda: set(answered(telegram)) == chats, 90)
    log = await bot.stop()
    assert "Traceback" not in log
    counts = answered(telegram)
    # only a send in flight at the kill may arrive twice (the documented ambiguous send): Telegram had it
    assert {chat for chat, n in counts.items() if n > 1} <= in_flight and max(counts.values()) <= 2
    assert sum(sent["text"].startswith("Sorry") for sent in telegram.sent) == len(refused)
    assert dead(bot) == []
    for chat in blocked:  # a refused reply is sent again as it was written, never generated anew
        asked = [r for r in fake_llm.requests if f"k{chat}x0" in str(r["messages"][-1]["content"])]
        assert len(asked) == 1
