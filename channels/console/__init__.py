"""The console: a chat in the terminal."""
