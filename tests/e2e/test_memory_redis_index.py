"""Issue 46 end to end: the same conversation played through `relaybot run` (Telegram and the fake model, on the redis
bus) with the memory index in SQLite files and with it in Redis (`memory.index: redis`): the recall tool and the
auto-recall before each turn find the same passages, and the Redis one holds the scope's passages in Redis."""

from __future__ import annotations

from pathlib import Path

from bot.cluster.redis import RedisState
from tests.e2e.test_memory_windows import ASKED, REPLIES, chat, filler, recalled, searching
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.memory.test_memory import is_consolidation
from tests.support.gateway import TelegramBot

RECALLED = "[From earlier conversations"


async def played(tmp_path: Path, url: str, prefix: str, index: str) -> tuple[list[str], list[str]]:
    """The conversation on a fresh bot whose indexes are kept in `index`: the recall tool's result for each question
    of ASKED, and the passages auto-recalled into each turn's prompt."""
    async with FakeLLM() as fake_llm, FakeTelegram() as telegram:
        fake_llm.default = searching(ASKED, REPLIES)
        bus = {"backend": "redis", "url": url, "prefix": prefix}
        options = {"streaming": "off"}
        async with TelegramBot(
            tmp_path, fake_llm, telegram, options, agent={"memory_window": 4}, bus=bus, memory={"index": index}
        ) as bot:
            await bot.gateway.manager.ready("telegram")
            said = [*list(REPLIES)[:2], *filler(0, 7), "The spare keys are in the blue vase in the hall"]
            said += [*filler(7, 7), list(REPLIES)[2], *filler(14, 7), list(REPLIES)[3], *filler(21, 7)]
            sent = await chat(telegram, [*said, list(REPLIES)[4], *filler(28, 4)], 0)
            results = [await recalled(fake_llm, telegram, question, sent + n) for n, question in enumerate(ASKED)]
        turns = [body["messages"][-1] for body in fake_llm.requests if not is_consolidation(body)]
        blocks = [str(m["content"]).partition("[end of recalled passages]")[0] for m in turns if m["role"] == "user"]
        return results, [block for block in blocks if block.startswith(RECALLED)]


async def test_recall_and_auto_recall_find_the_same_passages_with_the_index_in_redis(
    tmp_path: Path, redis_url: str
) -> None:
    on_files = await played(tmp_path / "sqlite", redis_url, "files", "sqlite")
    in_redis = await played(tmp_path / "redis", redis_url, "shared", "redis")

    assert in_redis == on_files
    results, blocks = in_redis
    assert "Tulips would do well there." in results[0] and "the blue vase" in results[1]
    assert "grilled sardines" in results[2] and len(blocks) >= 10  # found through Dana, as on SQLite
    shared = RedisState(redis_url, prefix="shared")
    assert shared.client.exists(shared.key("memory-index", "{memory}", "version"))
    assert not any((tmp_path / "redis" / "state").rglob("index.sqlite3"))  # no file kept beside it
    assert any((tmp_path / "sqlite" / "state").rglob("index.sqlite3"))
    shared.client.close()
