"""Slack: Socket Mode and the Web API through slack-bolt and slack-sdk."""
