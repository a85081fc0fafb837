"""What tests share: adapter harnesses, publish recorders, bounded polling, virtual time."""
