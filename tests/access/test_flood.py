from collections.abc import Callable

import pytest

from bot.access.flood import RateLimit, SenderRateLimit, Verdict
from bot.access.redis_flood import RedisSenderRateLimit
from bot.bus import ChatRef, InboundMessage, Trust
from bot.cluster.redis import RedisState

Limits = Callable[[int, Callable[[], float]], RateLimit]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "redis"])
def limits(request: pytest.FixtureRequest) -> Limits:
    """Makes rate limits counting in this process, or in one Redis shared by every limit made."""
    if request.param == "memory":
        return SenderRateLimit
    url = request.getfixturevalue("redis_url")
    return lambda per_minute, clock: RedisSenderRateLimit(RedisState(url, "test"), per_minute, clock)


def message(sender: str = "7", trust: Trust = Trust.GUEST) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", "-100"), sender_id=sender, text="hi", trust=trust)


def test_past_the_limit_messages_drop_with_one_notice_a_minute(limits: Limits) -> None:
    clock = Clock()
    limit = limits(3, clock)
    verdicts = [limit.check(message()) for _ in range(6)]
    assert verdicts == [Verdict.PASS] * 3 + [Verdict.DROP_AND_NOTIFY, Verdict.DROP, Verdict.DROP]
    clock.now += 30
    assert limit.check(message()) is Verdict.DROP
    assert limit.check(message("8")) is Verdict.PASS
    clock.now += 30
    assert [limit.check(message()) for _ in range(4)] == [Verdict.PASS] * 3 + [Verdict.DROP_AND_NOTIFY]


def test_owners_are_never_limited(limits: Limits) -> None:
    limit = limits(1, Clock())
    assert {limit.check(message(trust=Trust.OWNER)) for _ in range(100)} == {Verdict.PASS}


def test_zero_turns_the_limit_off(limits: Limits) -> None:
    limit = limits(0, Clock())
    assert {limit.check(message()) for _ in range(100)} == {Verdict.PASS}


def test_senders_idle_past_the_window_are_forgotten_while_active_ones_stay_limited() -> None:
    clock = Clock()
    limit = SenderRateLimit(2, clock)
    for sender in range(1000):
        limit.check(message(str(sender)))
    assert limit.tracked == 1000
    clock.now += 50
    assert [limit.check(message("flooder")) for _ in range(3)][-1] is Verdict.DROP_AND_NOTIFY
    clock.now += 15
    assert limit.check(message("newcomer")) is Verdict.PASS
    assert limit.tracked == 2  # the thousand idle senders are gone; the flooder's window is still open
    assert limit.check(message("flooder")) is Verdict.DROP


def test_a_sender_is_forgotten_one_window_after_its_last_counted_message() -> None:
    clock = Clock()
    limit = SenderRateLimit(5, clock)
    for sender in range(100):
        limit.check(message(str(sender)))
        clock.now += 1
    assert limit.tracked == 60  # a second apart: those of the last minute, never two minutes' worth
    limit.check(message("99"))  # a message again moves a sender to the newest
    clock.now += 59
    limit.check(message("late"))
    assert limit.tracked == 2
