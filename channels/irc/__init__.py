"""IRC through pydle: private messages and channel lines addressed by nick; replies as lines the server paces."""
