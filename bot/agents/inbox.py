"""Files a chat sends, handed to the agent that answers it: the channels save them in the gateway's private staging
folder, and the router moves them into that agent's workspace `inbox/`, where no other agent's tools reach.

A message replayed after a crash still names its staged paths; a file that was already moved is found where it went.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from bot.bus import Attachment, InboundMessage

PRIVATE_DIR_MODE = 0o700


def staging_folder(state_dir: Path) -> Path:
    """Where channels save what chats send until the router knows the agent: `state_dir/incoming/`, private,
    outside every workspace (made here when missing)."""
    folder = state_dir / "incoming"
    state_dir.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    folder.mkdir(exist_ok=True, mode=PRIVATE_DIR_MODE)
    folder.chmod(PRIVATE_DIR_MODE)
    return folder


def has_files(message: InboundMessage) -> bool:
    """Whether the message carries a file (its own, or the image of the message it quotes)."""
    return bool(message.attachments) or (message.reply_to is not None and message.reply_to.image is not None)


def deliver_files(message: InboundMessage, staging: Path, inbox: Path) -> InboundMessage:
    """The message with every file under `staging` moved to the same place under `inbox` (`<channel>/<chat>/<name>`)
    and its path rewritten; files elsewhere are left as they are. Blocking: run it off the event loop."""
    staging = staging.resolve()
    attachments = tuple(_delivered(item, staging, inbox) for item in message.attachments)
    quote = message.reply_to
    if quote is not None and quote.image is not None:
        quote = replace(quote, image=_delivered(quote.image, staging, inbox))
    return replace(message, attachments=attachments, reply_to=quote)


def _delivered(attachment: Attachment, staging: Path, inbox: Path) -> Attachment:
    source = Path(attachment.path).resolve()
    if not source.is_relative_to(staging):
        return attachment
    relative = source.relative_to(staging)
    target = inbox / relative
    if source.exists():  # else moved before this message was replayed: the target is where it went
        _private_folders(inbox, relative.parent)
        shutil.move(source, target)  # a rename, or copy then delete across file systems; a crash keeps the source
    return replace(attachment, path=str(target))


def prune_staged(state_dir: Path, before: float) -> int:
    """Delete staged files last changed before `before` (a message that never reached an agent); return how many."""
    folder = state_dir / "incoming"
    if not folder.is_dir():
        return 0
    stale = [path for path in folder.rglob("*") if path.is_file() and path.stat().st_mtime < before]
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)


def _private_folders(root: Path, relative: Path) -> None:
    """Make `root/relative` and the folders between them, each private."""
    folder = root
    root.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    for part in relative.parts:
        folder = folder / part
        folder.mkdir(exist_ok=True, mode=PRIVATE_DIR_MODE)
