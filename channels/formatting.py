"""Splitting long replies at platform limits and rendering Markdown for each platform."""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MARKDOWN_HINT = re.compile(r"[*_`~|\\>#]|\]\(|^\s*(?:[-+]|\d+[.)])(?:\s|$)|^\s*[-=]{2,}|\n\n\n", re.MULTILINE)
"""Anything the Telegram converter would change beyond escaping and trimming: emphasis, code, links, quotes,
headings, lists, runs of blank lines."""


def split_for_platform(text: str, limit: int) -> list[str]:
    """Split at paragraph, then line, then sentence boundaries; code blocks are closed and reopened."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    for block, fence in _blocks(text):
        if fence is None:
            pieces.extend(_split_prose(block, limit))
        else:
            pieces.extend(_split_code(block, fence, limit))
    return _pack(pieces, limit, "\n\n")


def _blocks(text: str) -> list[tuple[str, str | None]]:
    """Paragraphs and whole fenced code blocks; the second item is the opening fence line of code."""
    blocks: list[tuple[str, str | None]] = []
    prose: list[str] = []
    code: list[str] | None = None
    for line in text.split("\n"):
        if code is not None:
            code.append(line)
            if _FENCE.match(line) and len(code) > 1:
                blocks.append(("\n".join(code), code[0]))
                code = None
        elif _FENCE.match(line):
            if prose:
                blocks.extend((p, None) for p in "\n".join(prose).split("\n\n") if p.strip())
                prose = []
            code = [line]
        else:
            prose.append(line)
    if code is not None:
        code.append(code[0].strip()[:3])
        blocks.append(("\n".join(code), code[0]))
    if prose:
        blocks.extend((p, None) for p in "\n".join(prose).split("\n\n") if p.strip())
    return blocks


def _split_prose(text: str, limit: int) -> list[str]:
    if len(text) <= limit:
        return [text]
    for pattern, joiner in (("\n", "\n"), (_SENTENCE_END, " "), (" ", " ")):
        parts = pattern.split(text) if isinstance(pattern, re.Pattern) else text.split(pattern)
        if len(parts) > 1:
            return _pack([p for part in parts for p in _split_prose(part, limit)], limit, joiner)
    return [text[i : i + limit] for i in range(0, len(text), limit)]


def _split_code(block: str, opening: str, limit: int) -> list[str]:
    """A code block too long for one message becomes several, each a complete block."""
    if len(block) <= limit:
        return [block]
    lines = block.split("\n")
    closing = lines[-1]
    body = lines[1:-1]
    room = limit - len(opening) - len(closing) - 2
    if room <= 0:
        raise ValueError(f"limit {limit} is too small for a code block")
    chunks: list[list[str]] = [[]]
    size = 0
    for line in body:
        for piece in [line[i : i + room] for i in range(0, len(line), room)] or [""]:
            if chunks[-1] and size + len(piece) + 1 > room:
                chunks.append([])
                size = 0
            chunks[-1].append(piece)
            size += len(piece) + 1
    return [f"{opening}\n" + "\n".join(chunk) + f"\n{closing}" for chunk in chunks]


def _pack(pieces: list[str], limit: int, joiner: str) -> list[str]:
    """Join consecutive pieces greedily while the result stays within the limit."""
    out: list[str] = []
    for piece in pieces:
        if out and len(out[-1]) + len(joiner) + len(piece) <= limit:
            out[-1] += joiner + piece
        else:
            out.append(piece)
    return out


def markdown_to_telegram_html(text: str) -> str:
    """Telegram's HTML subset: bold, italic, code, pre, links, quotes; lists become bullets."""
    if not _MARKDOWN_HINT.search(text):
        return html.escape(text.strip(), quote=False)  # what the converter makes of plain text, without its passes
    from chatgpt_md_converter import telegram_format

    return telegram_format(text)


def markdown_to_slack_mrkdwn(text: str) -> str:
    """Slack's mrkdwn: bold, italic, strike, code, links as <url|label>, bullets; &, < and > escaped."""
    from slackify_markdown import slackify_markdown

    return slackify_markdown(text).strip()
