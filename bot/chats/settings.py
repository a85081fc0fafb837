"""Per-chat settings: the choices made from inside a chat, in one SQLite file on the local backend."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from bot.storage.sqlite import open_store

Activation = Literal["mention", "always"]


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """One chat's own choices; None means the config decides."""

    activation: Activation | None = None  # `/activation`: answer only when mentioned, or everything
    model: str | None = None  # `/model <alias>`: an alias from `llm.models`


def settings_to_json(settings: ChatSettings) -> str:
    """The settings as one JSON object, without the fields left to the config."""
    return json.dumps({k: v for k, v in asdict(settings).items() if v is not None}, separators=(",", ":"))


def settings_from_json(text: str | bytes | None) -> ChatSettings:
    """The inverse of `settings_to_json`; unknown fields (from a newer version) are ignored."""
    if not text:
        return ChatSettings()
    data: dict[str, Any] = json.loads(text)
    known = set(ChatSettings.__slots__)
    return ChatSettings(**{k: v for k, v in data.items() if k in known})


class ChatSettingsStore(Protocol):
    """Reads and changes one chat's settings, by session key; shared by every process of a deployment."""

    def get(self, session_key: str) -> ChatSettings: ...
    def update(self, session_key: str, **changes: Any) -> ChatSettings: ...


class LocalChatSettings:
    """Chat settings in a SQLite file (0600), safe to share between the processes of one home."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def get(self, session_key: str) -> ChatSettings:
        """The chat's settings; all None for a chat that never changed any."""
        if not self._path.exists():
            return ChatSettings()
        with self._connect() as db:
            row = db.execute("SELECT data FROM chat_settings WHERE session_key = ?", (session_key,)).fetchone()
        return settings_from_json(row[0] if row else None)

    def update(self, session_key: str, **changes: Any) -> ChatSettings:
        """Set the named fields (None returns one to the config) and return the chat's new settings."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT data FROM chat_settings WHERE session_key = ?", (session_key,)).fetchone()
            settings = replace(settings_from_json(row[0] if row else None), **changes)
            db.execute(
                "INSERT INTO chat_settings (session_key, data) VALUES (?, ?) "
                "ON CONFLICT(session_key) DO UPDATE SET data = excluded.data",
                (session_key, settings_to_json(settings)),
            )
        return settings

    def _connect(self) -> sqlite3.Connection:
        db = open_store(self._path)
        db.execute("CREATE TABLE IF NOT EXISTS chat_settings (session_key TEXT PRIMARY KEY, data TEXT NOT NULL)")
        return db
