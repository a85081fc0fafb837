"""Markdown as Signal shows it: plain text plus text styles (`start:length:STYLE`, in UTF-16 code units)."""

from __future__ import annotations

import re

_PATTERN = re.compile(
    r"```[^\n]*\n(?P<block>.*?)\n?```"
    r"|`(?P<code>[^`\n]+)`"
    r"|^#{1,6}[ \t]+(?P<heading>[^\n]+)"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<url>[^)\s]+)\)"
    r"|\*\*(?P<bold>[^\n]+?)\*\*"
    r"|__(?P<bold_>[^\n]+?)__"
    r"|~~(?P<strike>[^\n]+?)~~"
    r"|(?<![\w*])\*(?P<italic>[^*\n]+?)\*(?![\w*])"
    r"|(?<![\w_])_(?P<italic_>[^_\n]+?)_(?![\w_])",
    re.DOTALL | re.MULTILINE,
)
_STYLES = {
    "block": "MONOSPACE",
    "code": "MONOSPACE",
    "heading": "BOLD",
    "bold": "BOLD",
    "bold_": "BOLD",
    "strike": "STRIKETHROUGH",
    "italic": "ITALIC",
    "italic_": "ITALIC",
}
_VERBATIM = frozenset({"block", "code"})


def _units(text: str) -> int:
    """The length of `text` in UTF-16 code units, as Signal counts offsets."""
    return len(text.encode("utf-16-le")) // 2


def markdown_to_signal(text: str) -> tuple[str, list[str]]:
    """The text without markdown's marks, and the styles that show them: bold, italic, strikethrough, monospace
    (code keeps its content verbatim); a link reads `label (url)`."""
    styles: list[str] = []

    def render(part: str, offset: int) -> str:
        out: list[str] = []
        position = 0
        for match in _PATTERN.finditer(part):
            out.append(part[position : match.start()])
            position = match.end()
            kind = match.lastgroup or ""
            if kind == "url":
                out.append(f"{match.group('label')} ({match.group('url')})")
                continue
            start = offset + _units("".join(out))
            inner = match.group(kind)
            shown = inner if kind in _VERBATIM else render(inner, start)
            if shown:
                styles.append(f"{start}:{_units(shown)}:{_STYLES[kind]}")
            out.append(shown)
        out.append(part[position:])
        return "".join(out)

    return render(text, 0), styles
