"""Backups: one archive of the config, the workspace and the state, its manifest, and restoring it."""
