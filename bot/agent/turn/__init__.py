"""The turn: one model-and-tools run, its stream, its bounds and what it has said."""
