"""Triggers: signed webhooks that start a turn toward a configured chat, each delivery once (POST /hooks/<name>)."""
