"""/new, /sessions and /resume: the live session set aside (memory kept), a fresh or an archived one in its place."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.agent.consolidation import MemoryConsolidator
from bot.agent.turn_hooks import TurnHooks
from bot.bus import InboundMessage
from bot.commands.catalogue import NEW, RESUME
from bot.commands.parse import Invocation
from bot.commands.router import CommandRouter, Handler
from bot.memory.files import scope_for
from bot.sessions.archive import ArchivedSession
from bot.sessions.session import Session, Sessions

LISTED = 20
"""How many archived sessions /sessions shows (the most recently active), and /resume can reach."""
NEW_SESSION = "Started a new conversation."
NO_ARCHIVES = "This chat has no archived sessions yet; /new archives the current one."


def resume_number(text: str) -> int | None:
    """The N of `/resume N`, or None when it is missing or not a number."""
    words = text.split()
    return int(words[1]) if len(words) == 2 and words[1].isdigit() else None


def size_text(size: int) -> str:
    """A file size people read: 812 B, 14 KB, 2.3 MB."""
    if size < 1024:
        return f"{size} B"
    return f"{size / 1024:.0f} KB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MB"


def archive_lines(archives: list[ArchivedSession], zone: ZoneInfo) -> list[str]:
    """One numbered line per archive: when it was last active, its size, its first words."""
    lines = []
    for number, archive in enumerate(archives, 1):
        when = datetime.fromtimestamp(archive.last_active, zone).strftime("%Y-%m-%d %H:%M")
        words = archive.first_words or "(no text)"
        lines.append(f"{number}. {when} · {archive.messages} messages, {size_text(archive.size)} · {words}")
    return lines


class SessionSwitch:
    """Lists a chat's archived sessions and switches its live one: fresh (/new, /reset) or archived (/resume N)."""

    def __init__(
        self,
        sessions: Sessions,
        hooks: TurnHooks,
        workspace: Path,
        memory: MemoryConsolidator | None = None,
        timezone: str = "UTC",
    ) -> None:
        self._sessions = sessions
        self._hooks = hooks
        self._workspace = workspace
        self._memory = memory
        self._zone = ZoneInfo(timezone)

    async def listing(self, message: InboundMessage) -> str:
        """/sessions: the chat's archived sessions, numbered for /resume, most recently active first."""
        archives = await self._archives(message)
        if not archives:
            return NO_ARCHIVES
        heading = "Archived sessions (/resume N makes one the live session again):"
        return "\n".join([heading, *archive_lines(archives, self._zone)])

    def router(self) -> CommandRouter[Handler[str]]:
        """The commands answered in the chat's lane, between turns: /new (or /reset) and /resume N."""
        router: CommandRouter[Handler[str]] = CommandRouter("lane")
        router.add(NEW, self.fresh)
        router.add(RESUME, self.resume)
        return router

    async def fresh(self, message: InboundMessage, found: Invocation) -> str:
        """/new (or /reset): the live session archived, a fresh one in its place; the reply to send."""
        key = message.chat.session_key
        await self._sessions.load(key)  # a session not cached is read off the event loop first
        await self._set_aside(message, self._sessions.reset(key))
        return NEW_SESSION

    async def resume(self, message: InboundMessage, found: Invocation) -> str:
        """/resume N: archived session N live again, the live one archived; the reply to send."""
        key = message.chat.session_key
        await self._sessions.load(key)
        number = resume_number(message.text)
        archives = await self._archives(message)
        if number is None or not 1 <= number <= len(archives):
            return "Which one? /sessions lists them; then /resume N." if archives else NO_ARCHIVES
        chosen = archives[number - 1]
        try:
            await self._set_aside(message, self._sessions.resume(key, chosen.id))
        except KeyError:
            return "That session is no longer there; /sessions lists the ones that are."
        return f"Resumed the session of {chosen.first_words or 'no words'!r} ({chosen.messages} messages)."

    async def _archives(self, message: InboundMessage) -> list[ArchivedSession]:
        found = await asyncio.to_thread(self._sessions.archives, message.chat.session_key)
        return found[:LISTED]

    async def _set_aside(self, message: InboundMessage, old: Session) -> None:
        """The archived session's memory is consolidated in the background; session_end hears of it."""
        if self._memory and old.messages:
            self._memory.archive(old, scope_for(self._workspace, message), message.chat)
        await self._hooks.session_ended(message.chat, len(old.messages))
