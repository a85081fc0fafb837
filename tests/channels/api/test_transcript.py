"""The web chat's history: stored session messages reduced to what the user typed and what the bot replied."""

from __future__ import annotations

from channels.api.transcript import chat_history


def test_history_keeps_user_text_and_final_replies_only() -> None:
    header = "[api DM me thread default · from me (api:me) · 2026-11-23 05:30 Monday]"
    messages = [
        {"role": "user", "content": f"{header}\nread my notes"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [{"id": "1"}]},
        {"role": "tool", "tool_call_id": "1", "content": "the answer is 42"},
        {"role": "assistant", "content": "It says 42."},
        {"role": "user", "content": "[system message for api DM me · 2026-11-23 06:00 Monday]\nheartbeat tasks"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": f"{header}\none\n\n{header}\ntwo"},
    ]
    assert chat_history(messages) == [
        {"role": "user", "text": "read my notes"},
        {"role": "bot", "text": "It says 42."},
        {"role": "user", "text": "one\n\ntwo"},
    ]
    assert chat_history(messages, limit=1) == [{"role": "user", "text": "one\n\ntwo"}]
