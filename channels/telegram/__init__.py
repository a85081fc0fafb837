"""Telegram: the Bot API through python-telegram-bot."""
