from pathlib import Path

from bot.bus import ChatRef
from channels.catchup import ActiveChats

DM = ChatRef("discord", "100")
THREAD = ChatRef("slack", "C1", "1700000000.000001")


def test_chats_are_kept_with_their_last_id_across_restarts_for_24_hours(tmp_path: Path) -> None:
    now = [1_000_000.0]
    path = tmp_path / "catchup" / "slack.json"
    chats = ActiveChats(path, clock=lambda: now[0])
    chats.seen(DM, "5")
    now[0] += 3600
    chats.seen(THREAD, "1700000001.000002")
    now[0] += 60
    chats.seen(DM, "7")
    reopened = ActiveChats(path, clock=lambda: now[0])
    assert [(c.chat, c.last_id) for c in reopened.recent()] == [(THREAD, "1700000001.000002"), (DM, "7")]
    now[0] += 24 * 3600 + 1
    assert reopened.recent() == []


def test_an_unreadable_file_means_no_catch_up(tmp_path: Path) -> None:
    path = tmp_path / "discord.json"
    path.write_text("{not json")
    assert ActiveChats(path).recent() == []
