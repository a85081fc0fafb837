"""Keeping state: files written privately and atomically, and bounded maps of the latest items in memory."""
