"""relaybot: a self-hosted AI assistant for chat apps."""

__version__ = "0.1.0"
