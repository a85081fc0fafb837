"""What changed between two configs, key by key, and which of those keys a running gateway can take live."""

from __future__ import annotations

import fnmatch
from typing import Any

from pydantic import BaseModel

from bot.config.schema import Config

LIVE_KEYS = (
    "personas*",
    "routes*",
    "llm.*",
    "budgets*",
    "roles*",
    "owners*",
    "channels.*.allow_from*",
    "channels.*.dm_policy",
    "channels.*.group_policy",
    "channels.*.groups*",
    "channels.*.queue_mode",
    "channels.*.group_history*",
    "channels.*.on_edit",
    "channels.*.accounts.*.allow_from*",
    "channels.*.accounts.*.dm_policy",
    "channels.*.accounts.*.group_policy",
    "channels.*.accounts.*.groups*",
    "channels.*.accounts.*.queue_mode",
    "agent.queue_mode",
    "tools.by_role*",
    "heartbeat.*",
    "log_level",
    "agents*",
    "bindings*",
    "tools.ask_agent*",
)
"""Keys (glob patterns over dotted paths) that apply from the next turn; every other change needs a restart."""


def changed_keys(old: Config, new: Config) -> list[str]:
    """The dotted paths whose values differ, as deep as both sides are sections; lists and dicts as one key,
    except a platform's `accounts`: `channels.telegram.accounts.<name>` for a bot added or removed, and
    `….accounts.<name>.<key>` for a setting of one that changed."""
    found: list[str] = []
    _compare(old, new, "", found)
    return found


def describe(key: str, new: Config) -> str:
    """A changed key as a reload names it: `bot telegram@work added` (or removed), else `<key> changed`."""
    parts = key.split(".")
    if len(parts) == 4 and parts[0] == "channels" and parts[2] == "accounts":
        platform, name = parts[1], parts[3]
        kept = any(account.name == name for account in getattr(new.channels, platform).accounts)
        return f"bot {platform}@{name} {'added' if kept else 'removed'}"
    return f"{key} changed"


def is_live(key: str) -> bool:
    """Whether a running gateway applies a change of `key` without a restart."""
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in LIVE_KEYS)


def _compare(old: BaseModel, new: BaseModel, prefix: str, found: list[str]) -> None:
    for name in type(old).model_fields:
        key = f"{prefix}{name}"
        before: Any = getattr(old, name)
        after: Any = getattr(new, name)
        if isinstance(before, BaseModel) and isinstance(after, BaseModel) and type(before) is type(after):
            _compare(before, after, f"{key}.", found)
        elif name == "accounts" and before != after:
            _compare_accounts(before, after, f"{key}.", found)
        elif before != after:
            found.append(key)


def _compare_accounts(old: list[Any], new: list[Any], prefix: str, found: list[str]) -> None:
    """Accounts by name: one key per bot added or removed, and one per changed setting of a kept bot."""
    before = {account.name: account for account in old}
    after = {account.name: account for account in new}
    for name in dict.fromkeys([*before, *after]):
        if name not in before or name not in after:
            found.append(f"{prefix}{name}")
        else:
            _compare(before[name], after[name], f"{prefix}{name}.", found)
