"""Telegram's HTML parse mode, as strictly as Telegram checks it: the fake's markup validator."""

from __future__ import annotations

import re

_HTML_TAGS = frozenset(
    [
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "span",
        "tg-spoiler",
        "a",
        "code",
        "pre",
        "blockquote",
        "tg-emoji",
    ]
)
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY = re.compile(r"&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]+));")
_TAG_NAME = re.compile(r"[^\s>]*")
_ATTRIBUTE = re.compile(r"""\s*([^\s=>]+)\s*(?:(=)\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9.-]*)))?""")
_END_TAG = re.compile(r"([^\s>]*)\s*(>?)")


class HtmlError(ValueError):
    """Markup Telegram's HTML parse mode refuses; the message is Telegram's reason."""


def html_visible_text(markup: str) -> str:
    """The text Telegram shows for HTML parse-mode markup; HtmlError when Telegram would refuse it."""
    out: list[str] = []
    open_tags: list[str] = []
    i, size = 0, len(markup)
    while i < size:
        char = markup[i]
        if char == "&" and (entity := _ENTITY.match(markup, i)) and (decoded := _decode_entity(entity)):
            out.append(decoded)
            i = entity.end()
        elif char != "<":
            out.append(char)  # Telegram keeps a stray "&" or an unknown "&name;" literally
            i += 1
        elif markup.startswith("</", i):
            i = _close_tag(markup, i, open_tags)
        else:
            i = _open_tag(markup, i, open_tags)
    if open_tags:
        raise HtmlError(f'Can\'t find end tag corresponding to start tag "{open_tags[-1]}"')
    return "".join(out)


def _decode_entity(entity: re.Match[str]) -> str | None:
    decimal, hexadecimal, name = entity.groups()
    if name is not None:
        return _NAMED_ENTITIES.get(name)
    code = int(decimal) if decimal is not None else int(hexadecimal, 16)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else None


def _byte_offset(markup: str, i: int) -> int:
    return len(markup[:i].encode())


def _open_tag(markup: str, start: int, open_tags: list[str]) -> int:
    where = f"at byte offset {_byte_offset(markup, start)}"
    name_match = _TAG_NAME.match(markup, start + 1)
    assert name_match is not None
    name, i = name_match.group().lower(), name_match.end()
    if i == len(markup):
        raise HtmlError(f"Unclosed start tag {where}")
    if name not in _HTML_TAGS:
        raise HtmlError(f'Unsupported start tag "{name}" {where}')
    attributes: dict[str, str] = {}
    while (found := _ATTRIBUTE.match(markup, i)) is not None:
        attribute, equals, double, single, token = found.groups()
        i = found.end()
        if not equals and not (name == "blockquote" and attribute.lower() == "expandable"):
            raise HtmlError(f'Expected equal sign in declaration of an attribute of the tag "{name}" {where}')
        if token is not None and markup[i : i + 1] not in (">", " ", "\t", "\n", "\r"):
            if markup[i : i + 1] in ('"', "'", ""):
                raise HtmlError(f"Unclosed start tag {where}")
            raise HtmlError(f"Unexpected end of name token at byte offset {_byte_offset(markup, found.start(5))}")
        attributes[attribute.lower()] = next((v for v in (double, single, token) if v is not None), "")
    i = len(markup) if (close := markup.find(">", i)) == -1 or markup[i:close].strip() else close
    if i == len(markup):
        raise HtmlError(f"Unclosed start tag {where}")
    if name == "span" and attributes.get("class") != "tg-spoiler":
        raise HtmlError(f'Tag "span" must have class "tg-spoiler" {where}')
    open_tags.append(name)
    return i + 1


def _close_tag(markup: str, start: int, open_tags: list[str]) -> int:
    where = f"at byte offset {_byte_offset(markup, start)}"
    if not open_tags:
        raise HtmlError(f"Unexpected end tag {where}")
    match = _END_TAG.match(markup, start + 2)
    assert match is not None
    name, closed = match.group(1).lower(), match.group(2)
    if not closed:
        raise HtmlError(f"Unclosed end tag {where}")
    if name and name != open_tags[-1]:
        raise HtmlError(f'Unmatched end tag {where}, expected "</{open_tags[-1]}>", found "</{name}>"')
    open_tags.pop()
    return match.end()
