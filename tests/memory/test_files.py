"""Which memory scope a message reads and writes."""

from pathlib import Path

from bot.bus import ChatRef, InboundMessage, Trust
from bot.memory.files import scope_for


def message(chat: str, trust: Trust, person: str | None = None, direct: bool = True) -> InboundMessage:
    return InboundMessage(ChatRef.parse(chat), "5", "hi", trust, is_direct=direct, person=person)


def test_a_persons_dms_on_every_app_share_one_scope(tmp_path: Path) -> None:
    telegram = scope_for(tmp_path, message("telegram:123", Trust.USER, "alice"))
    discord = scope_for(tmp_path, message("discord:900", Trust.USER, "alice"))
    assert telegram == discord and telegram.directory == tmp_path / "memory" / "people" / "alice"


def test_owner_dms_stay_main_and_groups_and_strangers_keep_their_chat_scope(tmp_path: Path) -> None:
    assert scope_for(tmp_path, message("telegram:123", Trust.OWNER, "alice")).is_main
    group = scope_for(tmp_path, message("telegram:-100", Trust.USER, "alice", direct=False))
    assert group.directory == tmp_path / "memory" / "chats" / "telegram_-100"
    assert scope_for(tmp_path, message("telegram:9", Trust.GUEST)).directory.name == "telegram_9"


def test_a_chat_asked_again_gets_the_same_scope_and_its_trust_still_decides(tmp_path: Path) -> None:
    first = scope_for(tmp_path, message("telegram:77", Trust.USER))
    again = scope_for(tmp_path, message("telegram:77", Trust.USER))
    assert again is first and not first.is_main
    assert scope_for(tmp_path, message("telegram:77", Trust.OWNER)).is_main
    assert scope_for(tmp_path / "other", message("telegram:77", Trust.USER)).directory.parent.parent.parent == (
        tmp_path / "other"
    )
    assert scope_for(tmp_path, message("telegram:77", Trust.USER, "bob")).directory.name == "bob"
