"""What runs every channel: supervision, intake, presence, outbound delivery, watchdog and health."""
