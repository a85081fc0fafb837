"""What OpenAI's Chat Completions endpoint refuses before answering, with its wording: the fake server's 400s."""

from __future__ import annotations

import re

Refusal = tuple[int, str, str, str]  # status, and the error object's message, param and code
# The o-series (o1, o3-mini, o4-mini …) and the gpt-5 family, except gpt-5-chat, are reasoning models.
_REASONING = re.compile(r"^(o\d|gpt-5(?!-chat)|gpt-6)")
# gpt-5.1 and later reason at "none" unless asked, and take a temperature while they do not reason.
_REASONS_OFF_BY_DEFAULT = re.compile(r"^gpt-5\.[1-9]")
_CLASSIC = re.compile(r"^(gpt-3\.5|gpt-4|gpt-5-chat)")


def refusal(body: dict, refuse_streaming: int = 0) -> Refusal | None:
    """What OpenAI refuses this body with, or None when it would answer it; `refuse_streaming` is a status or 0."""
    model = str(body.get("model", ""))
    if refuse_streaming and body.get("stream"):
        message = "Your organization must be verified to stream this model."
        return refuse_streaming, message, "stream", "unsupported_value"
    if _REASONING.match(model):
        effort_is_none = body.get("reasoning_effort", "none") == "none"
        if "max_tokens" in body:
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            return 400, message, "max_tokens", "unsupported_parameter"
        if body.get("temperature", 1) != 1 and not (_REASONS_OFF_BY_DEFAULT.match(model) and effort_is_none):
            message = (
                f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
                "Only the default (1) value is supported."
            )
            return 400, message, "temperature", "unsupported_value"
    elif _CLASSIC.match(model) and "reasoning_effort" in body:
        message = "Unsupported parameter: 'reasoning_effort' is not supported with this model."
        return 400, message, "reasoning_effort", "unsupported_parameter"
    return None
