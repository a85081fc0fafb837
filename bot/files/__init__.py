"""Files kept per chat: their records, and the documents among them read as text."""
