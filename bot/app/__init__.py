"""The composition root: builds every part from the config, starts them in order and stops them in reverse."""
