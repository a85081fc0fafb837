"""A fake model that reads what a message attached: read_document on the file id it was shown, then the text."""

from __future__ import annotations

import re

from tests.fakes.openai_server import Reply, Text, ToolCalls, echo

FILE_ID = re.compile(r"\bf_[0-9a-f]{8}\b")


def read_the_attached_document(body: dict) -> Reply:
    """read_document on the file id in the last user message; after its result, `Read: <the result>`; else an
    echo."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return Text("Read: " + str(last.get("content")))
    found = FILE_ID.search(str(last.get("content"))) if last.get("role") == "user" else None
    if found is None:
        return echo(body)
    return ToolCalls((("read_document", {"file_id": found.group(0)}),))
