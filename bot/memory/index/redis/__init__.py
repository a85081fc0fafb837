"""A scope's index in Redis: passages and postings in plain Redis structures, searched in Python."""
