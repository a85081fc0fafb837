"""`relaybot init` on a terminal: ask for the model, its key or server, and the channels, write them, and say
what to do next."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

from bot.config.text_editor import KeyPath, set_value
from bot.setup.check import Check

Ask = Callable[[str, str, bool], str]
Confirm = Callable[[str], bool]

PlatformQuestions = Mapping[str, tuple[tuple[str, str], ...]]
"""By platform, the (key, question) pairs that enable it: its credentials."""
SHOWN_KEYS = frozenset({"url", "account", "server", "nick", "jid"})
"""Answers that are addresses or numbers, not secrets: echoed as typed."""


def ask_settings(ask: Ask, confirm: Confirm, platforms: PlatformQuestions) -> dict[KeyPath, str]:
    """The answers as YAML values by key path; `ask(question, default, hidden)` and `confirm(question)` do the I/O,
    `platforms` says which chat platforms are offered and what each asks."""
    settings: dict[KeyPath, str] = {}
    model = ask("Model (a litellm name such as openai/gpt-4o-mini or ollama/llama3)", "openai/gpt-4o-mini", False)
    settings[("llm", "model")] = json.dumps(model)
    base = ask("Server URL for a local or OpenAI-compatible model (empty for the provider's own)", "", False)
    if base:
        settings[("llm", "api_base")] = json.dumps(base)
        key = ask("API key (empty if the server needs none)", "", True)
    else:
        key = ask("API key (empty to take it from the provider's variable, such as OPENAI_API_KEY)", "", True)
    settings[("llm", "api_key")] = json.dumps(key)  # written even when empty: no variable is sent to the server
    for channel, tokens in platforms.items():
        if not confirm(f"Enable {channel}?"):
            continue
        settings[("channels", channel, "enabled")] = "true"
        for name, question in tokens:
            if value := ask(question, "", name not in SHOWN_KEYS):
                settings[("channels", channel, name)] = json.dumps(value)
    if confirm("Enable the web chat (and API) on this machine?"):
        settings[("channels", "api", "enabled")] = "true"
    return settings


def apply_settings(text: str, settings: dict[KeyPath, str]) -> str:
    """The config text with each answered key set, comments kept."""
    for path, value in settings.items():
        text = set_value(text, path, value)
    return text


def next_step(config_file: Path, checks: list[Check] | None, server: str | None = None) -> str:
    """init's last words: the fix for the first ✗ its checks found, else how to go on (what to set when none ran,
    for a model on the provider's own service or on the `server` URL llm.api_base names)."""
    if checks is None:
        settings = (
            f"llm.model and llm.api_base ({server}), and llm.api_key if that server needs one,"
            if server
            else "llm.model (and llm.api_key, or the provider's variable such as OPENAI_API_KEY)"
        )
        return (
            f"Next: check {settings} in {config_file},\nrun `relaybot doctor`, talk to the bot with `relaybot chat`, "
            "then connect a chat app and `relaybot run`."
        )
    failed = next((check for check in checks if check.status == "fail"), None)
    if failed is None:
        return (
            "Next: talk to the bot with `relaybot chat`, then connect a chat app (the README links a page for each) "
            "and `relaybot run`."
        )
    return f"Next ({failed.name}): {failed.fix}.\nThe config is {config_file}; `relaybot doctor` checks again."
