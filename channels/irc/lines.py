"""A reply as IRC lines: Markdown rendered with IRC's control codes, each line within a byte budget.

IRC has no multi-line messages: every line is its own PRIVMSG, at most 512 bytes with the sender's prefix and CRLF
(RFC 2812 §2.3). Prose is reflowed the way Markdown reads it (a single newline is a space) and wrapped at word
boundaries; each line of a code block stays a line of its own, its fences dropped, so code is never reflowed.
"""

from __future__ import annotations

import re

BOLD, ITALIC = "\x02", "\x1d"
MESSAGE_BYTES = 512
"""RFC 2812 §2.3: a message, prefix and CRLF included, is at most 512 bytes."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_STARTS_LINE = re.compile(r"^\s*(?:[-*+] |\d+[.)] |> |#{1,6} )")
_HEADING = re.compile(r"^\s*#{1,6} +(.*)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_ITALIC = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])|(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w_])")
_LINK = re.compile(r"\[([^\]]+)\]\((\S+?)\)")


def prefix_bytes(nick: str, user: str, host: str, target: str) -> int:
    """Bytes the server adds around the text when it relays `PRIVMSG target :text` from nick!user@host."""
    return len(f":{nick}!{user}@{host} PRIVMSG {target} :\r\n".encode())


def irc_lines(text: str, budget: int) -> list[str]:
    """`text` as the lines to send, each at most `budget` bytes of UTF-8; never an empty one."""
    if budget < 8:
        raise ValueError(f"a budget of {budget} bytes cannot carry a line")
    lines: list[str] = []
    for line, is_code in _logical_lines(text):
        rendered = line.expandtabs(4) if is_code else _inline(line)
        lines.extend(_wrap(rendered or " ", budget, keep_spaces=is_code))
    return lines


def _logical_lines(text: str) -> list[tuple[str, bool]]:
    """Each line to send before wrapping, and whether it is code; prose lines joined as Markdown joins them."""
    result: list[tuple[str, bool]] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            result.append((" ".join(part.strip() for part in paragraph), False))
            paragraph.clear()

    in_code = False
    for raw in text.split("\n"):
        if _FENCE.match(raw):
            flush()
            in_code = not in_code
        elif in_code:
            result.append((raw.rstrip(), True))
        elif not raw.strip():
            flush()
        else:
            if _STARTS_LINE.match(raw):
                flush()
            paragraph.append(raw)
    flush()
    return result


def _inline(line: str) -> str:
    """Markdown emphasis, headings and links as IRC formatting and plain text."""
    heading = _HEADING.match(line)
    if heading:
        line = f"{BOLD}{heading.group(1).strip()}{BOLD}"
    line = _LINK.sub(lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m.group(1)} <{m.group(2)}>", line)
    line = _BOLD.sub(lambda m: f"{BOLD}{m.group(1) or m.group(2)}{BOLD}", line)
    return _ITALIC.sub(lambda m: f"{ITALIC}{m.group(1) or m.group(2)}{ITALIC}", line)


def _size(text: str) -> int:
    return len(text.encode())


def _wrap(line: str, budget: int, keep_spaces: bool) -> list[str]:
    """Break at spaces so each piece fits; a word longer than the budget alone is cut at a character boundary."""
    if _size(line) <= budget:
        return [line]
    pieces: list[str] = []
    current = ""
    for word in re.split(r"(?<= )", line) if keep_spaces else line.split(" "):
        joined = current + word if keep_spaces else (f"{current} {word}" if current else word)
        if _size(joined) <= budget:
            current = joined
            continue
        if current:
            pieces.append(current)
        current = word
        while _size(current) > budget:
            cut = _cut(current, budget)
            pieces.append(current[:cut])
            current = current[cut:]
    if current.strip() or not pieces:
        pieces.append(current)
    return [piece.rstrip() or " " for piece in pieces]


def _cut(text: str, budget: int) -> int:
    """The most characters of `text` whose UTF-8 fits in `budget` bytes."""
    size = 0
    for index, char in enumerate(text):
        size += _size(char)
        if size > budget:
            return max(index, 1)
    return len(text)
