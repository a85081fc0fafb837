"""What users set for one chat from inside it (its activation, its model), kept across restarts."""
