"""Which delivery a request is (a header such as X-GitHub-Delivery, or a JSON path), and the run id it gets."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping

from bot.triggers.templates import lookup

MAX_ID = 200
"""Longer delivery ids are cut: a sender's id is a key, not a document."""


def delivery_id(source: str, headers: Mapping[str, str], payload: object) -> str | None:
    """The delivery id `source` (`header:<Name>` or `json:<path>`) names, or None when the request has none."""
    kind, _, name = source.partition(":")
    if kind == "header":
        found: object = headers.get(name.lower())
    else:
        found = lookup(payload, name)
    if found is None or isinstance(found, dict | list) or str(found).strip() == "":
        return None
    return str(found).strip()[:MAX_ID]


def run_id(trigger: str, delivery: str | None) -> str:
    """The run (and inbound message) id: fixed by the delivery id, so the journal too takes a delivery once."""
    if delivery is None:
        return f"trigger-{trigger}-{uuid.uuid4().hex}"
    return f"trigger-{trigger}-{hashlib.sha256(delivery.encode()).hexdigest()[:32]}"
