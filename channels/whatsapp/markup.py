"""Markdown to WhatsApp's own markup (*bold*, _italic_, ~strike~, ``` code ```), code blocks left as they are."""

from __future__ import annotations

import re

_FENCED = re.compile(r"(```.*?```)", re.DOTALL)
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_STRIKE = re.compile(r"~~(.+?)~~")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]]+)\]\((\S+?)\)")


def markdown_to_whatsapp(text: str) -> str:
    """Bold, strike, headings and links rewritten for WhatsApp; everything inside code fences untouched."""
    parts = _FENCED.split(text)
    return "".join(part if index % 2 else _prose(part) for index, part in enumerate(parts)).strip()


def _prose(text: str) -> str:
    text = _HEADING.sub(r"*\1*", text)
    text = _BOLD.sub(lambda match: f"*{match.group(1) or match.group(2)}*", text)
    text = _STRIKE.sub(r"~\1~", text)
    return _LINK.sub(
        lambda match: match.group(1) if match.group(1) == match.group(2) else f"{match[1]} ({match[2]})", text
    )
