"""The redis bus: inbox, outbox, handoff, scripts and trimming on Redis Streams, behind the RedisBus facade."""
