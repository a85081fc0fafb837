"""Choices as interactive message buttons: attachment actions whose callback carries a signed context.

Mattermost POSTs a press to the action's `integration.url` (the gateway) with the `context` it was given, unsigned;
the context's `sig` (HMAC of prompt and choice under a key made from the bot token) tells relaybot's own buttons
from a forged request."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from bot.bus import Choice

ACTIONS_PATH = "/mattermost/actions"
STYLES = {"default": "default", "primary": "primary", "danger": "danger"}


def action_key(token: str) -> bytes:
    """The signing key of one bot's buttons (the token itself never leaves in a post)."""
    return hashlib.sha256(b"relaybot mattermost actions\0" + token.encode()).digest()


def _signature(key: bytes, prompt: str, choice: str) -> str:
    return hmac.new(key, f"{prompt}\0{choice}".encode(), hashlib.sha256).hexdigest()


def choice_props(
    text: str, choices: tuple[Choice, ...], prompt_id: str, callback: str, key: bytes, root: str | None
) -> dict[str, Any]:
    """A post's `props` showing `choices` as buttons under `text`; each press is POSTed to `callback`."""
    actions = [
        {
            "id": f"choice{index}",  # letters and digits only: Mattermost routes presses by this id
            "name": choice.label,
            "type": "button",
            "style": STYLES[choice.style],
            "integration": {
                "url": callback,
                "context": {
                    "prompt": prompt_id,
                    "choice": choice.id,
                    "label": choice.label,
                    "root": root or "",
                    "sig": _signature(key, prompt_id, choice.id),
                },
            },
        }
        for index, choice in enumerate(choices)
    ]
    return {"attachments": [{"text": text, "actions": actions}]}


def verified(key: bytes, context: dict[str, Any]) -> bool:
    """Whether a callback's context is one relaybot signed."""
    prompt, choice, sig = context.get("prompt"), context.get("choice"), context.get("sig")
    if not isinstance(prompt, str) or not isinstance(choice, str) or not isinstance(sig, str):
        return False
    return hmac.compare_digest(sig, _signature(key, prompt, choice))
