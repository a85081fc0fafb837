"""How a model call travels: litellm (imported lazily, offline) or the direct OpenAI-compatible path over aiohttp."""
