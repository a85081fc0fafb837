"""The OpenAI-compatible endpoint: chat completions (plain or streamed) and the model list, answered by the agent."""
