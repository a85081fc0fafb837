"""Editing config YAML as text, so comments survive: find a key's lines, set a value, add keys new in a version."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_KEY = re.compile(r"^(\s*)([A-Za-z_][\w-]*):(.*)$")

KeyPath = tuple[str, ...]


def key_lines(text: str) -> dict[KeyPath, tuple[int, int, int]]:
    """Each key's (first comment line, key line, end) in `text`; a block ends where a line at its indent begins."""
    lines = text.splitlines()
    found: dict[KeyPath, tuple[int, int, int]] = {}
    stack: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        match = _KEY.match(line)
        if not match or line.lstrip().startswith("#"):
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, match.group(2)))
        start = index
        while start > 0 and lines[start - 1].strip().startswith("#") and _indent(lines[start - 1]) == indent:
            start -= 1
        end = index + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
            end += 1
        while end > index + 1 and not lines[end - 1].strip():
            end -= 1
        found[tuple(name for _, name in stack)] = (start, index, end)
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def set_value(text: str, path: KeyPath, value: str) -> str:
    """`text` with the scalar at `path` replaced by `value` (YAML source, such as `true` or `"abc"`)."""
    _, index, _ = key_lines(text)[path]
    lines = text.splitlines(keepends=True)
    match = _KEY.match(lines[index].rstrip("\n"))
    assert match is not None
    lines[index] = f"{match.group(1)}{match.group(2)}: {value}\n"
    return "".join(lines)


def missing_keys(user: Mapping[str, Any], example: Mapping[str, Any], prefix: KeyPath = ()) -> list[KeyPath]:
    """Keys of the example that the user's config lacks, as deep as both have sections."""
    missing: list[KeyPath] = []
    for key, value in example.items():
        if key not in user:
            missing.append((*prefix, key))
        elif isinstance(value, dict) and isinstance(user[key] or {}, dict):
            missing += missing_keys(user[key] or {}, value, (*prefix, key))
    return missing


def commented_additions(user_text: str, example_text: str, missing: list[KeyPath]) -> tuple[str, list[str]]:
    """Comment blocks (with defaults and their explanations) for keys not yet in the user's file; and their names."""
    blocks = key_lines(example_text)
    example_lines = example_text.splitlines()
    added: list[str] = []
    chunks: list[str] = []
    for path in missing:
        start, index, end = blocks[path]
        if f"# {example_lines[index]}\n" in user_text:
            continue  # added, commented, by an earlier init
        parents = [f"# {'  ' * depth}{name}:" for depth, name in enumerate(path[:-1])]
        body = [f"# {line}" if line.strip() else "#" for line in example_lines[start:end]]
        chunks.append("\n".join([*parents, *body]))
        added.append(".".join(path))
    return "\n\n".join(chunks), added
