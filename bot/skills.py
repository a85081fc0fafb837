"""Skills: folders with a SKILL.md (YAML frontmatter + Markdown instructions), parsed once per change."""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
REFRESH_SECONDS = 5.0
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_OS_ALIASES = {"macos": "darwin", "mac": "darwin", "osx": "darwin", "windows": "win32"}
_OS_NAMES = {"darwin": "macOS", "linux": "Linux", "win32": "Windows"}


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: what it is for, what it needs, and its instructions."""

    name: str
    description: str
    instructions: str
    folder: Path
    always: bool = False
    bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()

    def missing(
        self,
        which: Callable[[str], str | None] = shutil.which,
        environ: Mapping[str, str] = os.environ,
        platform: str = sys.platform,
    ) -> list[str]:
        """What this machine lacks for the skill, in words ("gh", "GITHUB_TOKEN", "macOS"); empty when available."""
        needs = [name for name in self.bins if which(name) is None]
        needs += [name for name in self.env if not environ.get(name)]
        if self.platforms and not any(platform.startswith(wanted) for wanted in self.platforms):
            needs.append(" or ".join(_OS_NAMES.get(p, p) for p in self.platforms))
        return needs


def parse_skill(folder: Path, text: str) -> Skill:
    """Read a SKILL.md; raise ValueError saying what is wrong with it."""
    import yaml

    match = _FRONTMATTER.match(text)
    if not match:
        raise ValueError("it does not start with a '---' YAML frontmatter block")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise ValueError(f"its frontmatter is not valid YAML ({type(exc).__name__})") from None
    if not isinstance(meta, dict):
        raise ValueError("its frontmatter is not a mapping of keys")
    name = meta.get("name", folder.name)
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name {name!r} must be lowercase letters, digits, '-' or '_'")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("it has no description")
    requires = meta.get("requires") or {}
    if not isinstance(requires, dict):
        raise ValueError("requires must be a mapping with bins and env lists")
    always = meta.get("always", False)
    if not isinstance(always, bool):
        raise ValueError("always must be true or false")
    return Skill(
        name=name,
        description=" ".join(description.split()),
        instructions=text[match.end() :].strip(),
        folder=folder,
        always=always,
        bins=_names(requires.get("bins"), "requires.bins"),
        env=_names(requires.get("env"), "requires.env"),
        platforms=tuple(_OS_ALIASES.get(n.lower(), n.lower()) for n in _names(meta.get("os"), "os")),
    )


def _names(value: Any, key: str) -> tuple[str, ...]:
    """A YAML string or list of strings as a tuple."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ValueError(f"{key} must be a list of names")
    return tuple(value)


def skills_prompt(skills: Iterable[Skill], missing: Callable[[Skill], list[str]] = Skill.missing) -> str:
    """The system prompt's skills section: one line per skill, then every `always` skill in full."""
    skills = list(skills)
    if not skills:
        return ""
    lines = ["## Skills", "", "Call load_skill(name) when a task matches a skill, then follow its instructions."]
    full = []
    for skill in skills:
        needs = missing(skill)
        line = f"- {skill.name}: {skill.description}"
        if needs:
            line += f" (unavailable: needs {', '.join(needs)})"
        elif skill.always:
            line += " (loaded below)"
            full.append(f"## Skill: {skill.name}\n\n{skill.instructions}")
        lines.append(line)
    return "\n\n".join(["\n".join(lines), *full])


class SkillLibrary:
    """Skills from several roots, later roots overriding earlier ones by name; a file is re-parsed when it changes.

    A call costs one stat per root: a skill folder added or removed shows at once, while the skill
    files themselves (and the tools they need) are checked again at most every `refresh` seconds,
    so a turn costs the same with 100 skills as with none. The `installed` roots (relaybot's own skills, which
    change only with the installation) are looked at only with the files.
    """

    def __init__(
        self,
        roots: Sequence[Path],
        refresh: float = REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        installed: Sequence[Path] = (),
    ) -> None:
        self._roots = list(roots)
        self._watched = [root for root in self._roots if root not in installed]
        self._refresh = refresh
        self._clock = clock
        self._listings: dict[Path, tuple[int, list[Path]]] = {}
        self._parsed: dict[Path, tuple[int, int, Skill | None]] = {}
        self._current: list[Skill] | None = None
        self._prompt = ""
        self._root_stamps: tuple[int | None, ...] = ()
        self._checked_at = 0.0

    def skills(self) -> list[Skill]:
        """Every valid skill, sorted by name; the same list object until something changed."""
        stamps = tuple(_mtime(root) for root in self._watched)
        now = self._clock()
        if self._current is not None and stamps == self._root_stamps and now - self._checked_at < self._refresh:
            return self._current
        self._root_stamps, self._checked_at = stamps, now
        found: dict[str, Skill] = {}
        for root in self._roots:
            for folder in self._folders(root):
                skill = self._load(folder / SKILL_FILE)
                if skill is not None:
                    found[skill.name] = skill
        latest = sorted(found.values(), key=lambda skill: skill.name)
        if self._current is None or [id(s) for s in latest] != [id(s) for s in self._current]:
            self._current = latest
        self._prompt = skills_prompt(self._current)
        return self._current

    def prompt(self) -> str:
        """The system prompt's skills section, rebuilt only when the skills are checked again."""
        self.skills()
        return self._prompt

    def get(self, name: str) -> Skill | None:
        """The skill called `name`, or None."""
        return next((skill for skill in self.skills() if skill.name == name), None)

    def _folders(self, root: Path) -> list[Path]:
        """The root's skill folders, listed again only when the root's mtime changes."""
        try:
            mtime = root.stat().st_mtime_ns
        except FileNotFoundError:
            self._listings.pop(root, None)
            return []
        cached = self._listings.get(root)
        if cached and cached[0] == mtime:
            return cached[1]
        with os.scandir(root) as entries:
            folders = sorted(Path(e.path) for e in entries if e.is_dir() and not e.name.startswith((".", "_")))
        self._listings[root] = (mtime, folders)
        return folders

    def _load(self, path: Path) -> Skill | None:
        try:
            stat = path.stat()
        except FileNotFoundError:
            self._parsed.pop(path, None)
            return None
        cached = self._parsed.get(path)
        if cached and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
            return cached[2]
        skill: Skill | None
        try:
            skill = parse_skill(path.parent, path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as exc:  # UnicodeDecodeError is a ValueError
            logger.warning("skipped skill %s: %s", path, exc)
            skill = None
        self._parsed[path] = (stat.st_mtime_ns, stat.st_size, skill)
        return skill


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
