"""Which API key a model call may send: the config's own, or the provider's variable only on the provider's host.

With `api_base` pointing elsewhere (a local server, a proxy), a key from the environment would go to a host
the user never gave it to; the config names the key there (`api_key: "${VAR}"`) or none is sent.
"""

from __future__ import annotations

from urllib.parse import urlsplit

PLACEHOLDER_KEY = "no-key"
"""Given to clients that insist on a key (litellm, the OpenAI SDK), so they never read one from the environment."""

# The hosts each provider's own variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, …) is meant for; a leading dot
# matches any subdomain. A provider missing here gets no key from the environment once `api_base` is set.
OWN_HOSTS: dict[str, tuple[str, ...]] = {
    "openai": ("api.openai.com",),
    "azure": (".openai.azure.com",),
    "anthropic": ("api.anthropic.com",),
    "openrouter": ("openrouter.ai",),
    "groq": ("api.groq.com",),
    "mistral": ("api.mistral.ai",),
    "deepseek": ("api.deepseek.com",),
    "gemini": ("generativelanguage.googleapis.com",),
    "together_ai": ("api.together.xyz",),
    "xai": ("api.x.ai",),
    "fireworks_ai": ("api.fireworks.ai",),
    "cohere": ("api.cohere.ai", "api.cohere.com"),
}


def provider_of(model: str) -> str:
    """The provider a litellm model name calls: its prefix, else OpenAI (as litellm reads `gpt-4o`, `whisper-1`)."""
    return model.split("/", 1)[0] if "/" in model else "openai"


def environment_allowed(model: str, api_base: str | None) -> bool:
    """Whether a call may take its key from the provider's variable: without `api_base`, or on the provider's host."""
    if not api_base:
        return True
    host = (urlsplit(api_base).hostname or "").lower()
    return any(
        host.endswith(own) if own.startswith(".") else host == own for own in OWN_HOSTS.get(provider_of(model), ())
    )


def call_key(model: str, api_key: str, api_base: str | None) -> str | None:
    """The key to hand a client that reads the environment when given none: the config's key; None where the
    provider's variable may be read; else the placeholder."""
    if api_key:
        return api_key
    return None if environment_allowed(model, api_base) else PLACEHOLDER_KEY


def inherited_key(own_key: str, own_base: str | None, parent_key: str, parent_base: str | None) -> str:
    """The key of a call that may set its own base and key (transcription, images, a `/model` choice): its own,
    else the parent's (`llm`'s) only when it goes where the parent's calls go."""
    if own_key:
        return own_key
    return parent_key if not own_base or own_base == parent_base else ""
