from collections.abc import Callable
from pathlib import Path

import pytest

from bot.bus import ChatRef
from bot.cluster.redis import RedisState
from channels.catchup import CATCH_UP_CHATS, ActiveChats, RecentChats
from channels.redis_catchup import RedisActiveChats

DM = ChatRef("discord", "100")
THREAD = ChatRef("slack", "C1", "1700000000.000001")


@pytest.fixture(params=["file", "redis"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[Callable[[], float]], RecentChats]:
    """Opens one channel's active chats as a restarted gateway would: the same file, or the same Redis."""
    if request.param == "file":
        return lambda clock: ActiveChats(tmp_path / "catchup" / "slack.json", clock=clock)
    url = request.getfixturevalue("redis_url")
    return lambda clock: RedisActiveChats(RedisState(url, "test"), "slack", clock=clock)


def test_chats_are_kept_with_their_last_id_across_restarts_for_24_hours(
    opener: Callable[[Callable[[], float]], RecentChats],
) -> None:
    now = [1_000_000.0]
    chats = opener(lambda: now[0])
    chats.seen(DM, "5")
    now[0] += 3600
    chats.seen(THREAD, "1700000001.000002")
    now[0] += 60
    chats.seen(DM, "7")
    reopened = opener(lambda: now[0])
    assert [(c.chat, c.last_id) for c in reopened.recent()] == [(THREAD, "1700000001.000002"), (DM, "7")]
    now[0] += 24 * 3600 + 1
    assert reopened.recent() == []


def test_an_unreadable_file_means_no_catch_up(tmp_path: Path) -> None:
    path = tmp_path / "discord.json"
    path.write_text("{not json")
    assert ActiveChats(path).recent() == []


def test_only_the_chats_active_most_lately_are_kept_however_many_wrote(
    opener: Callable[[Callable[[], float]], RecentChats],
) -> None:
    now = [1_000_000.0]
    chats = opener(lambda: now[0])
    for n in range(3 * CATCH_UP_CHATS):
        now[0] += 1
        chats.seen(ChatRef("slack", f"C{n}"), str(n))
    kept = opener(lambda: now[0]).recent()
    assert CATCH_UP_CHATS <= len(kept) <= 2 * CATCH_UP_CHATS
    assert kept[-1].last_id == str(3 * CATCH_UP_CHATS - 1)
    assert [c.last_id for c in kept] == [str(n) for n in range(3 * CATCH_UP_CHATS - len(kept), 3 * CATCH_UP_CHATS)]
