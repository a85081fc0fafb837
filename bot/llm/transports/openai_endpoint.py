"""Where the direct path sends `openai/…` calls: `llm.api_base`, else the environment, as litellm resolves it."""

from __future__ import annotations

import os

from bot.config.schema import LLMConfig

DEFAULT_BASE = "https://api.openai.com/v1"
# litellm's order (main.py's openai branch): the call's api_base, then these variables, then the default.
BASE_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_BASE")


def base_url(config: LLMConfig) -> str:
    """The base URL for `openai/…` models: `llm.api_base`, `OPENAI_BASE_URL`, `OPENAI_API_BASE`, else OpenAI's."""
    return config.api_base or next((value for name in BASE_VARIABLES if (value := os.environ.get(name))), DEFAULT_BASE)


def server_base(config: LLMConfig) -> str | None:
    """The model server to ask about the model: `llm.api_base`, else (`openai/…`) the environment's; None if hosted."""
    if config.api_base:
        return config.api_base
    if not config.model.startswith("openai/"):
        return None
    return next((value for name in BASE_VARIABLES if (value := os.environ.get(name))), None)
