"""Each platform's config section in a module of its own, their shared base, and the `channels` section."""
