"""Discord: the gateway and REST API through discord.py."""
