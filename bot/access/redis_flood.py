"""Flood control in Redis, so every gateway (and a standby taking over) counts the same."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from bot.access.flood import WINDOW, Verdict
from bot.bus import InboundMessage, Trust
from bot.cluster.redis import RedisState

# KEYS: the sender's window (a sorted set of pass times), the time of their last notice.
# ARGV: now, window seconds, limit, a unique member. Returns 0 pass, 1 drop, 2 drop and notify.
_CHECK = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local ttl = math.ceil(window * 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('DEL', KEYS[2])
  return 0
end
local last = redis.call('GET', KEYS[2])
if last and now - tonumber(last) < window then
  return 1
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
return 2
"""
_VERDICTS = (Verdict.PASS, Verdict.DROP, Verdict.DROP_AND_NOTIFY)


class RedisSenderRateLimit:
    """`SenderRateLimit`'s sliding one-minute window per channel and sender, as one atomic Lua script."""

    def __init__(self, state: RedisState, per_minute: int, clock: Callable[[], float] = time.time) -> None:
        self.per_minute = per_minute
        self._state = state
        self._clock = clock  # wall time, not monotonic: gateways on several machines share the window
        self._script = state.client.register_script(_CHECK)

    def check(self, message: InboundMessage) -> Verdict:
        """Pass owners and senders within the limit; past it drop, notifying at most once a minute."""
        if message.trust is Trust.OWNER or self.per_minute <= 0:
            return Verdict.PASS
        key = self._state.key("ratelimit", message.chat.channel, message.sender_id)
        now = self._clock()
        member = f"{now!r}:{secrets.token_hex(4)}"
        verdict = self._script(keys=[key, f"{key}:notice"], args=[repr(now), WINDOW, self.per_minute, member])
        return _VERDICTS[int(verdict)]
