"""The configuration reference is generated from the schema, with the example config's comments as notes."""

from __future__ import annotations

import re

from bot.config.reference import config_reference
from bot.config.text_editor import key_lines
from bot.setup.home import bundled


def rows(reference: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in reference.splitlines():
        if match := re.match(r"^\| `([^`]+)` \| (.*) \|$", line):
            found[match.group(1)] = match.group(2).split(" | ")
    return found


def test_a_key_shows_its_type_default_and_the_example_comment() -> None:
    example = "llm:\n  # Seconds to wait for the model.\n  timeout: 120\n"
    table = rows(config_reference(example))
    assert table["llm.timeout"] == ["duration", "120.0", "Seconds to wait for the model."]
    assert table["channels.telegram.group_policy"][0] == '"mention" \\| "open" \\| "off"'
    assert table["channels.telegram.token"][:2] == ["secret", '""']


def test_every_schema_key_is_listed_even_without_a_comment() -> None:
    table = rows(config_reference(""))
    assert {"workspace", "bus.claim_idle", "channels.api.tokens[].trust", "personas.<name>.model"} <= set(table)
    assert table["bus.claim_idle"][2] == ""


def test_every_key_of_the_example_config_is_in_the_reference() -> None:
    example = bundled("config.example.yaml").read_text(encoding="utf-8")
    listed = set(rows(config_reference(example)))
    missing = [".".join(path) for path in key_lines(example) if not _documented(path, listed)]
    assert missing == []


def _documented(path: tuple[str, ...], listed: set[str]) -> bool:
    """A key, a section holding listed keys, or a key under a user-named entry (personas.support.model)."""
    forms = {".".join(path)} | {".".join((*path[:at], "<name>", *path[at + 1 :])) for at in range(1, len(path))}
    return any(key in forms or any(key.startswith(form + ".") for form in forms) for key in listed) or any(
        ".".join(path[:at]) in listed for at in range(1, len(path))
    )
