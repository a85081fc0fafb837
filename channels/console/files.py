"""`/file PATH [words]` in the terminal chat: a file of this machine sent to the bot, as a chat app's upload is."""

from __future__ import annotations

import mimetypes
import shutil
from dataclasses import dataclass
from pathlib import Path

from bot.bus import Attachment, ChatRef, new_id
from channels.media import kind_of

USAGE = "Send a file with /file PATH, and words for the bot after it if you like."


@dataclass(frozen=True, slots=True)
class FileCommand:
    """What `/file` names: the file (`~` expanded) and the words that go with it."""

    path: Path
    text: str


def parse_file_command(line: str) -> FileCommand | None:
    """The file and words of a `/file` line (a path with spaces is quoted); None when no path follows."""
    rest = line.strip()[len("/file") :].strip()
    if rest[:1] in ("'", '"') and (end := rest.find(rest[0], 1)) > 0:
        named, text = rest[1:end], rest[end + 1 :]
    else:
        named, _, text = rest.partition(" ")
    if not named:
        return None
    return FileCommand(Path(named).expanduser(), text.strip())


def stage_file(path: Path, staging: Path, chat: ChatRef) -> Attachment:
    """A copy of `path` in the chat's folder under `staging` (the router moves it into the agent's inbox), attached
    under its own name; OSError when it cannot be read."""
    if not path.is_file():
        raise FileNotFoundError(f"no file at {path}")
    target = staging / chat.folder / f"{new_id()[:8]}-{path.name}"  # a file sent twice is two files
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    shutil.copyfile(path, target)
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return Attachment(str(target), mime, kind_of(mime), path.name)
