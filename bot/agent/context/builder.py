"""Builds what the model sees: system prompt, history, and the new message."""

from __future__ import annotations

import base64
import logging
import math
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.agent.context.attachments import describe_attachment
from bot.agent.context.prompt_cache import Stamp, SystemPromptCache, stamp
from bot.agent.context.room import context_text, quote_text
from bot.agent.turn.tool_results import DEFAULT_TOOL_RESULT_CHARS, clip_tool_message, shorten_earlier_recall
from bot.bus import Attachment, InboundMessage, Trust
from bot.files.records import FileRecord
from bot.memory.files import MemoryScope, scope_for
from bot.skills import SkillLibrary
from bot.storage.recent import RecentMap
from bot.tools.chat_files import ChatFiles

logger = logging.getLogger(__name__)

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
OWNER_ONLY_FILES = frozenset({"USER.md"})
MAX_INLINE_IMAGE_BYTES = 5 * 1024 * 1024
MAX_INBOUND_CHARS = 32_000
INLINE_ATTACHMENT_CHARS = 20_000
FILE_CACHE_SIZE = 256  # the workspace's own files plus the memory files of the chats active lately


def cap_text(text: str, limit: int) -> str:
    """The text up to `limit` characters, with a note the model sees when the rest was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[message cut: it had {len(text):,} characters; only the first {limit:,} are shown]"


class FileCache:
    """Reads text files, re-reading one only when its mtime or size changes; keeps the `capacity` last read."""

    def __init__(self, capacity: int = FILE_CACHE_SIZE) -> None:
        self._entries: RecentMap[Path, tuple[Stamp, str]] = RecentMap(capacity)

    @property
    def cached(self) -> int:
        """How many files are held."""
        return len(self._entries)

    def read(self, path: Path) -> str:
        """The file's text, or "" when it does not exist."""
        found = stamp(path)
        if found is None:
            self._entries.pop(path, None)
            return ""
        entry = self._entries.get(path, fresh=True)
        if entry and entry[0] == found:
            return entry[1]
        text = path.read_text(encoding="utf-8", errors="replace")
        self._entries[path] = (found, text)  # past the bound, a memory file not read lately is read again later
        return text


def memory_note(scope: MemoryScope, workspace: Path, trust: Trust) -> str:
    """Where this chat's memory lives, and how the model can search its past with the tools it has."""
    memory, history = (path.relative_to(workspace) for path in (scope.memory_file, scope.history_file))
    note = (
        f"Long-term memory of this chat is in {memory} (shown below when it has content); {history} logs one "
        "dated summary per past conversation. Earlier passages may be recalled before the user's message. "
        "When the user refers to something from before, search before saying you do not know: "
    )
    if trust is Trust.OWNER:
        return note + f"recall('words or a question'), or exec `grep -i -C1 'keyword' {history}` or read_file it."
    return note + "recall('words or a question') searches this chat's own past."


def _as_sent(history: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Stored messages as the model reads them again: a long tool result cut (an earlier recall result shortened),
    the reasoning kept for people left out; the rest (most) as they are, without a call each."""
    sent = []
    for message in history:
        if message.get("role") == "tool":
            message = clip_tool_message(shorten_earlier_recall(message), limit)
        elif "reasoning" in message:
            message = {key: value for key, value in message.items() if key != "reasoning"}
        sent.append(message)
    return sent


class ContextBuilder:
    """Assembles the request messages for one turn."""

    def __init__(
        self,
        workspace: Path,
        timezone: str,
        skills: SkillLibrary | None = None,
        max_tool_result_chars: int = DEFAULT_TOOL_RESULT_CHARS,
        max_inbound_chars: int = MAX_INBOUND_CHARS,
        inline_attachment_chars: int = INLINE_ATTACHMENT_CHARS,
        memory_chars: Callable[[], int] | None = None,
        files: ChatFiles | None = None,
    ) -> None:
        self._max_tool_result_chars = max_tool_result_chars
        self._workspace = workspace
        self._memory_chars = memory_chars
        self._memory_cuts: set[tuple[Path, int]] = set()
        self._zone = ZoneInfo(timezone)
        self._timezone = timezone
        self._files = FileCache()
        self._prompts = SystemPromptCache()
        self._skills = skills
        self._max_inbound_chars = max_inbound_chars
        self._inline_attachment_chars = inline_attachment_chars
        self._chat_files = files
        self._minute: tuple[float, str] = (math.nan, "")  # the local minute last written in a header: its start, text

    def build(
        self,
        message: InboundMessage,
        scope: MemoryScope,
        history: list[dict[str, Any]],
        user_text: str,
        persona_file: Path | None = None,
        bootstrap: tuple[str, ...] | None = None,
    ) -> list[dict[str, Any]]:
        """System prompt, then history (long tool results cut, earlier recall results shortened), then the new
        user message."""
        messages = [{"role": "system", "content": self.system_prompt(message, scope, persona_file, bootstrap)}]
        messages += _as_sent(history, self._max_tool_result_chars)
        messages.append(self.user_message(message, user_text))
        return messages

    def bootstrap_files(self, scope: MemoryScope) -> tuple[str, ...]:
        """The workspace files a scope's system prompt carries by default (USER.md only in the main scope)."""
        return tuple(name for name in BOOTSTRAP_FILES if scope.is_main or name not in OWNER_ONLY_FILES)

    def system_prompt(
        self,
        message: InboundMessage,
        scope: MemoryScope,
        persona_file: Path | None = None,
        bootstrap: tuple[str, ...] | None = None,
    ) -> str:
        """Identity, workspace, bootstrap files (the persona's after SOUL.md), the scope's memory and the skills.

        Byte-stable between turns so providers can reuse a cached prefix: the time goes in each user message.
        Made again only when one of its files, the memory's share of the window or the skills changed.
        `bootstrap` names the workspace files to carry instead of the scope's defaults (an agent_bootstrap hook's).
        """
        names = self.bootstrap_files(scope) if bootstrap is None else bootstrap
        key = (scope, message.trust, persona_file, names)
        limit = self._memory_chars() if self._memory_chars else None
        inputs = (limit, self._skills.prompt() if self._skills else "")
        prompt = self._prompts.get(key, inputs)
        if prompt is None:
            files = self._bootstrap_paths(names)  # once: each file's path is resolved, a few stats apiece
            paths = self._prompt_files(files, scope, persona_file)
            stamps = tuple(map(stamp, paths))
            prompt = self._assemble(message, scope, files, persona_file, (limit, inputs[1]))
            self._prompts.put(key, paths, stamps, inputs, prompt)
        return prompt

    def _bootstrap_paths(self, names: tuple[str, ...]) -> list[tuple[str, Path]]:
        """Each named file with its path; a name reaching outside the workspace is left out."""
        root = self._workspace.resolve()
        paths = [(name, self._workspace / name) for name in names]
        return [(name, path) for name, path in paths if path.resolve().is_relative_to(root)]

    def _prompt_files(
        self, files: list[tuple[str, Path]], scope: MemoryScope, persona_file: Path | None
    ) -> tuple[str, ...]:
        """The files a scope's prompt is made from."""
        bootstrap = [path for _, path in files]
        return tuple(str(path) for path in (*bootstrap, *([persona_file] if persona_file else []), scope.memory_file))

    def _assemble(
        self,
        message: InboundMessage,
        scope: MemoryScope,
        files: list[tuple[str, Path]],
        persona_file: Path | None,
        extras: tuple[int | None, str],
    ) -> str:
        limit, skills = extras
        sections = [
            "You are relaybot, a personal AI assistant that talks with people in chat apps. "
            "Answer in the chat's language, briefly, in Markdown that reads well on a phone.",
            f"Timezone: {self._timezone}; each user message starts with its time and where it came from.\n"
            f"Workspace: {self._workspace} (file tools take paths relative to it).",
            memory_note(scope, self._workspace, message.trust),
        ]
        for name, path in files:
            text = self._files.read(path).strip()
            if text:
                sections.append(f"## {name}\n\n{text}")
            if name == "SOUL.md" and persona_file is not None and (persona := self._files.read(persona_file).strip()):
                sections.append(f"## Persona\n\n{persona}")
        memory = self._files.read(scope.memory_file).strip()
        if memory:
            sections.append(f"## Memory (MEMORY.md)\n\n{self._within_share(memory, scope, limit)}")
        if skills:
            sections.append(skills)
        return "\n\n".join(sections)

    def _within_share(self, memory: str, scope: MemoryScope, limit: int | None) -> str:
        """MEMORY.md cut to its share of the window, with a note telling the model so."""
        if limit is None or len(memory) <= limit:
            return memory
        if (scope.memory_file, len(memory)) not in self._memory_cuts:
            self._memory_cuts.add((scope.memory_file, len(memory)))
            logger.info("%s is %d characters; the prompt carries its first %d", scope.memory_file, len(memory), limit)
        path = scope.memory_file.relative_to(self._workspace)
        return (
            f"{memory[:limit]}\n\n[{path} is longer ({len(memory):,} characters) than fits here; only its first "
            f"{limit:,} are shown. Read the file for the rest, and condense it when you next update it.]"
        )

    def runtime_header(self, message: InboundMessage) -> str:
        """A one-line note of where the message came from and who sent it."""
        chat = message.chat
        where = f"{chat.channel} {'DM' if message.is_direct else 'group'} {chat.chat_id}"
        if chat.thread_id:
            where += f" thread {chat.thread_id}"
        when = self._when(message.created_at)  # the same header if the turn runs again
        if message.kind == "system":
            return f"[system message for {where} · {when}]"
        sender = f"{message.sender_name} ({message.sender_id})" if message.sender_name else message.sender_id
        return f"[{where} · from {sender} · {when}]"

    def _when(self, timestamp: float) -> str:
        """The local minute of `timestamp` as a header writes it; messages within the minute last written reuse it
        (its edges, a millisecond each, are formatted again: the start is worked out in floating point)."""
        start, text = self._minute
        if start + 0.001 <= timestamp < start + 59.999:
            return text
        sent = datetime.fromtimestamp(timestamp, self._zone)
        text = sent.strftime("%Y-%m-%d %H:%M %A")
        self._minute = (timestamp - sent.second - sent.microsecond / 1e6, text)
        return text

    def user_text(self, message: InboundMessage) -> str:
        """The text stored in history: header, group context, quote, message (capped), attachments (text inlined)."""
        lines = [self.runtime_header(message)]
        if message.context:
            lines.append(context_text(message.context, message.trust, self._zone))
        if message.reply_to is not None:
            lines.append(quote_text(message.reply_to, message.trust))
        lines.append(cap_text(message.text, self._max_inbound_chars))
        for attachment in message.attachments:
            record = self._record(message, attachment)
            lines.append(describe_attachment(attachment, self._workspace, self._inline_attachment_chars, record))
        return "\n".join(line for line in lines if line)

    def _record(self, message: InboundMessage, attachment: Attachment) -> FileRecord | None:
        """The attachment's record in its chat's scope (the same one each time it is seen), when files are kept."""
        if self._chat_files is None:
            return None
        directory = scope_for(self._workspace, message).directory
        try:
            path = Path(attachment.path)
            return self._chat_files.register(directory, message.chat, path, attachment.name, attachment.mime_type)
        except OSError as exc:  # the file went missing: the note describes it by path
            logger.warning("[%s] attachment not recorded: %s", message.chat.session_key, exc)
            return None

    def user_message(self, message: InboundMessage, text: str) -> dict[str, Any]:
        """The new user message, with images (its own, then the replied-to message's) inlined as image parts."""
        images = [a for a in message.attachments if a.kind == "image"]
        quoted = message.reply_to.image if message.reply_to is not None else None
        if quoted is not None and quoted.kind == "image":
            images.append(quoted)
        if not images:
            return {"role": "user", "content": text}
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for image in images:
            data = Path(image.path).read_bytes()[: MAX_INLINE_IMAGE_BYTES + 1]
            if len(data) > MAX_INLINE_IMAGE_BYTES:
                parts[0]["text"] += f"\n[image too large to show: {image.path}]"
                continue
            encoded = base64.b64encode(data).decode("ascii")
            parts.append({"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{encoded}"}})
        return {"role": "user", "content": parts}
