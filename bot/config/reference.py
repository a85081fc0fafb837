"""The configuration reference, generated from the schema so it cannot drift: every key, its type, default and note."""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from bot.config.durations import parse_duration
from bot.config.schema import Config
from bot.config.text_editor import KeyPath, key_lines


@dataclass(frozen=True, slots=True)
class KeyEntry:
    """One documented key: where it sits, what it takes, its default, and the example file's comment on it."""

    path: str
    type: str
    default: str
    note: str


def config_reference(example: str) -> str:
    """The reference as Markdown: one table per section, notes taken from the example config's comments."""
    notes = _comments(example)
    out = ["# Configuration reference", "", _PREAMBLE, ""]
    for section, entries in _sections(Config, (), notes):
        out += [f"## `{section}`" if section else "## Top level", "", "| Key | Type | Default | |", "|---|---|---|---|"]
        out += [f"| `{e.path}` | {_cell(e.type)} | {_cell(e.default)} | {_cell(e.note)} |" for e in entries]
        out.append("")
    return "\n".join(out)


_PREAMBLE = (
    "Generated from relaybot's config schema at build time: every key the loader accepts, with its type and "
    "default; the notes are the comments of `config.example.yaml`. Durations read `30s`, `10m`, `1h`, `1d`; "
    '`"${VAR}"` takes a value from the environment. Unknown keys and bad values are errors that name the key.'
)


def _sections(
    model: type[BaseModel], prefix: KeyPath, notes: dict[KeyPath, str]
) -> Iterator[tuple[str, list[KeyEntry]]]:
    """Each section's own keys, then its subsections (a map of sections is documented through `<name>`)."""
    entries: list[KeyEntry] = []
    nested: list[tuple[type[BaseModel], KeyPath]] = []
    for attribute, field in model.model_fields.items():
        name = field.alias or attribute  # the key as written in YAML (smtp.from)
        path = (*prefix, name)
        section, shape = _section_in(field.annotation)
        if section is not None and shape == "one":
            nested.append((section, path))
            continue
        if section is not None:
            nested.append((section, (*path, "<name>") if shape == "map" else (*prefix, f"{name}[]")))
        kind = "duration" if _is_duration(field) else _type_name(field.annotation)
        entries.append(KeyEntry(".".join(path), kind, _default(field), _note(notes, path)))
    if entries:
        yield ".".join(prefix), entries
    for section, path in nested:
        yield from _sections(section, path, notes)


def _section_in(annotation: Any) -> tuple[type[BaseModel] | None, Literal["one", "map", "list"]]:
    """The section model an annotation holds, and whether as one value, a map of them, or a list."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        for arg in get_args(annotation):
            found = _section_in(arg)
            if found[0] is not None:
                return found
    if origin is dict:
        inner, _ = _section_in(get_args(annotation)[1])
        return inner, "map"
    if origin is list:
        inner, _ = _section_in(get_args(annotation)[0])
        return inner, "list"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, "one"
    return None, "one"


def _is_duration(field: FieldInfo) -> bool:
    """Whether the field reads durations (`30s`, `10m`), seen by the validator pydantic keeps in its metadata."""
    return any(getattr(item, "func", None) is parse_duration for item in field.metadata)


def _type_name(annotation: Any) -> str:
    """A reader's name for a type: `int`, `a | b` for choices, `list of str`, `map of str to Limit`."""
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return " | ".join(json.dumps(arg) for arg in args)
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(arg) for arg in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of {_type_name(args[0])} to {_type_name(args[1])}"
    if origin is not None and args:  # Annotated inside a container, e.g. Duration | None
        return "duration" if any(getattr(m, "func", None) is parse_duration for m in args[1:]) else _type_name(args[0])
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " | ".join(json.dumps(member.value) for member in annotation)
    if annotation is type(None):
        return "null"
    if annotation is SecretStr:
        return "secret"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section (below)"
    return getattr(annotation, "__name__", repr(annotation))


def _default(field: FieldInfo) -> str:
    """The default as YAML would show it; `required` when there is none."""
    if field.default is PydanticUndefined and field.default_factory is None:
        return "—"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, SecretStr):
        return '""' if not value.get_secret_value() else "(set)"
    if isinstance(value, BaseModel):
        return json.dumps(value.model_dump(mode="json", exclude_defaults=True)) if value else "{}"
    return json.dumps(value, default=str)


def _comments(example: str) -> dict[KeyPath, str]:
    """Each key's comment lines in the example config, joined into one paragraph."""
    lines = example.splitlines()
    found: dict[KeyPath, str] = {}
    for path, (start, index, _end) in key_lines(example).items():
        text = " ".join(line.strip().lstrip("#").strip() for line in lines[start:index])
        inline = lines[index].split(" # ", 1)[1].strip() if " # " in lines[index] else ""
        found[path] = " ".join(part for part in (text, inline) if part)
    return found


def _note(notes: dict[KeyPath, str], path: KeyPath) -> str:
    """The example's comment on a key; keys under a map of sections read their comment from any example entry."""
    if path in notes:
        return notes[path]
    for at, part in enumerate(path):
        if part == "<name>":
            for known, note in notes.items():
                if known[:at] == path[:at] and known[at + 1 :] == path[at + 1 :] and note:
                    return note
        elif part.endswith("[]"):
            bare = (*path[:at], part[:-2], *path[at + 1 :])
            if bare in notes:
                return notes[bare]
    return ""


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")
