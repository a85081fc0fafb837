"""The API server's front door: who may come in (tokens, browser sessions, origins), what every response carries."""
