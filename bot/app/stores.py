"""Where pairing, rate limits, ignore notices and the usage ledger live: files (local bus) or Redis (redis bus)."""

from __future__ import annotations

from bot.access.flood import RateLimit, SenderRateLimit
from bot.access.notices import IgnoreNotices, NoticesInProcess
from bot.access.pairing import Pairing, PairingBook
from bot.cluster.redis import RedisState
from bot.config import Config
from bot.usage.ledger import Ledger, UsageLedger


def pairing_book(config: Config, shared: RedisState | None) -> Pairing:
    """`state/pairing.json`, or the bot's Redis when `shared` is given."""
    if shared is None:
        return PairingBook(config.state_dir / "pairing.json", max_pending=config.access.max_pending)
    from bot.access.redis_pairing import RedisPairingBook

    return RedisPairingBook(shared, max_pending=config.access.max_pending)


def usage_ledger(config: Config, shared: RedisState | None) -> Ledger:
    """`state/usage.db`, or the bot's Redis (with day counters in the config's timezone) when `shared` is given."""
    if shared is None:
        return UsageLedger(config.state_dir / "usage.db")
    from bot.usage.redis_ledger import RedisUsageLedger

    return RedisUsageLedger(shared, config.timezone)


def sender_rate_limit(config: Config, shared: RedisState | None) -> RateLimit:
    """`access.rate_limit` counted in this process, or in Redis across gateways when `shared` is given."""
    if shared is None:
        return SenderRateLimit(config.access.rate_limit)
    from bot.access.redis_flood import RedisSenderRateLimit

    return RedisSenderRateLimit(shared, config.access.rate_limit)


def ignore_notices(shared: RedisState | None) -> IgnoreNotices:
    """Which ignored senders were logged already: by this process, or by any gateway when `shared` is given."""
    if shared is None:
        return NoticesInProcess()
    from bot.access.redis_notices import RedisIgnoreNotices

    return RedisIgnoreNotices(shared)
