"""A session's stored messages as the web chat shows them: the user's words, the bot's replies and their reasoning."""

from __future__ import annotations

import re
from typing import Any

from channels.api.frames import Frame

HISTORY = 50
# The runtime header the agent puts before each stored user message (bot/agent/context/builder.py).
_HEADER = re.compile(r"^\[(?:system message for )?\S+ (?:DM|group) [^\n]* · \d{4}-\d\d-\d\d \d\d:\d\d \w+\]\n?", re.M)


def chat_history(messages: list[dict[str, Any]], limit: int = HISTORY) -> list[Frame]:
    """The last `limit` user texts and final replies (with any reasoning kept beside them), oldest first.

    Tool calls, results and system turns are left out.
    """
    shown: list[Frame] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, str):
            continue
        if message.get("role") == "user" and not content.startswith("[system message for "):
            text = _HEADER.sub("", content).strip()
            if text:
                shown.append({"role": "user", "text": text})
        elif message.get("role") == "assistant" and not message.get("tool_calls") and content.strip():
            reasoning = message.get("reasoning")
            shown.append({"role": "bot", "text": content, **({"reasoning": reasoning} if reasoning else {})})
    return shown[-limit:]
