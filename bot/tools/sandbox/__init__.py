"""The two bubblewrap sandboxes, exec's and run_python's, built on one set of mounts; and the host fallback."""
