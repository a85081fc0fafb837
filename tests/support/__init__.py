"""What tests share: adapter harnesses, publish recorders."""
