"""Matrix through matrix-nio: one long-polled /sync in, room events out."""
