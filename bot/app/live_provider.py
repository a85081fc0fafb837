"""A provider whose model can be replaced while the bot runs: what a reload of `llm` swaps."""

from __future__ import annotations

from bot.llm.types import Provider


class SwappableProvider:
    """Answers with the provider it holds now; `swap` takes effect from the next call.

    `chat` is the held provider's own method, not a forwarding one: a call pays for no extra frame.
    """

    def __init__(self, provider: Provider) -> None:
        self.swap(provider)

    def swap(self, provider: Provider) -> None:
        """Use `provider` from the next call on (calls under way finish on the old one)."""
        self._provider = provider
        self.model = provider.model
        self.chat = provider.chat
