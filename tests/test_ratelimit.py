from bot.bus import ChatRef, InboundMessage, Trust
from bot.ratelimit import SenderRateLimit, Verdict


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def message(sender: str = "7", trust: Trust = Trust.GUEST) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", "-100"), sender_id=sender, text="hi", trust=trust)


def test_past_the_limit_messages_drop_with_one_notice_a_minute() -> None:
    clock = Clock()
    limit = SenderRateLimit(3, clock)
    verdicts = [limit.check(message()) for _ in range(6)]
    assert verdicts == [Verdict.PASS] * 3 + [Verdict.DROP_AND_NOTIFY, Verdict.DROP, Verdict.DROP]
    clock.now += 30
    assert limit.check(message()) is Verdict.DROP
    assert limit.check(message("8")) is Verdict.PASS
    clock.now += 30
    assert [limit.check(message()) for _ in range(4)] == [Verdict.PASS] * 3 + [Verdict.DROP_AND_NOTIFY]


def test_owners_are_never_limited() -> None:
    limit = SenderRateLimit(1, Clock())
    assert {limit.check(message(trust=Trust.OWNER)) for _ in range(100)} == {Verdict.PASS}


def test_zero_turns_the_limit_off() -> None:
    limit = SenderRateLimit(0, Clock())
    assert {limit.check(message()) for _ in range(100)} == {Verdict.PASS}
