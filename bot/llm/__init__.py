"""Talking to models: types, the provider and its two transports, failures, prices, tokens."""
