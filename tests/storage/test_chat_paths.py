"""Paths named after a chat: the same paths as `/` makes, without interning the chat's name."""

import sys
import uuid
from pathlib import Path

import pytest

from bot.storage.chat_paths import chat_path


def test_a_chat_path_is_the_path_slash_would_make(tmp_path: Path) -> None:
    path = chat_path(tmp_path, "telegram_42", "telegram%3A42.jsonl")
    assert path == tmp_path / "telegram_42" / "telegram%3A42.jsonl"
    assert str(path) == f"{tmp_path}/telegram_42/telegram%3A42.jsonl" and path.parent.name == "telegram_42"
    path.parent.mkdir()
    path.write_text("kept")
    assert (tmp_path / "telegram_42" / "telegram%3A42.jsonl").read_text() == "kept"


def test_a_chat_path_leaves_the_chats_name_out_of_the_interned_strings(tmp_path: Path) -> None:
    name = f"chat_{uuid.uuid4().hex}"
    slashed, made = tmp_path / f"{name}_slashed", chat_path(tmp_path, name)
    probe = f"{name}_slashed"
    assert sys.intern(probe) is not probe  # `/` interned its part: the table had an equal string already
    fresh = "".join(["chat_", name.removeprefix("chat_")])
    assert sys.intern(fresh) is fresh and made.name == name and slashed.name  # nobody had interned the chat's name


@pytest.mark.parametrize("name", ["", ".", "..", "a/b"])
def test_a_name_that_is_not_one_plain_file_name_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="plain file name"):
        chat_path(tmp_path, name)
