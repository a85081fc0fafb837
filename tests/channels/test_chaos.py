"""Many chats, a flaky Telegram (429s, 502s, dropped connections) and redelivered updates: none lost, none doubled
beyond the sends whose connection dropped after Telegram had the message."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import TelegramBot

CHATS = 12
PER_CHAT = 10


async def test_chaos_loses_nothing_and_doubles_only_ambiguous_sends(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    telegram.chaos(0.1, seed=7)
    rng = random.Random(3)
    options = {"dm_policy": "open", "send_concurrency": 4}
    overrides = {"agent": {"queue_mode": "followup"}, "access": {"rate_limit": 0}}
    async with TelegramBot(tmp_path, fake_llm, telegram, options, **overrides) as bot:
        tokens = []
        for n in range(PER_CHAT):
            for chat in range(1000, 1000 + CHATS):
                token = f"k{chat}x{n}"
                tokens.append(token)
                update = telegram.text(token, chat_id=chat, user_id=chat)
                if rng.random() < 0.1:
                    telegram.push({"message": update["message"]})  # the same message again, as a redelivery
        await telegram.wait_for_sent(len(tokens), timeout=120)
        assert await bot.gateway.manager.flush(10)
        stats = await bot.gateway.agent.bus.stats()
    counts = Counter(s["text"].split()[-1] for s in telegram.sent)
    doubled = sum(n - 1 for n in counts.values())
    assert set(counts) == set(tokens)
    assert doubled <= stats.ambiguous_sends <= telegram.faults["drop-before"] + telegram.faults["drop-after"]
    assert stats.outbound_failed == 0 and stats.outbound_pending == 0 and stats.inbound_pending == 0
    assert sum(telegram.faults.values()) >= len(tokens) // 20
    for chat in range(1000, 1000 + CHATS):
        said = list(dict.fromkeys(s["text"].split()[-1] for s in telegram.sent if s["chat_id"] == chat))
        assert said == [f"k{chat}x{n}" for n in range(PER_CHAT)]
