"""Several agents in one gateway: which agent answers a chat."""
