from bot.bus import ChatRef
from bot.events import Event, EventBus, LLMCalled, StreamDelta, TurnStarted

CHAT = ChatRef("telegram", "42")


def called(model: str) -> LLMCalled:
    return LLMCalled(CHAT, model, 10, 2, 0.1)


def test_a_listener_hears_only_the_kinds_it_named_and_an_unnamed_one_hears_all() -> None:
    events = EventBus()
    calls: list[Event] = []
    everything: list[Event] = []
    events.subscribe(calls.append, LLMCalled)
    events.subscribe(everything.append)

    events.emit(TurnStarted(CHAT, "t1"))
    events.emit(called("m"))
    events.emit(StreamDelta(CHAT, "t1", "m1", "hi"))

    assert calls == [called("m")]
    assert [type(event) for event in everything] == [TurnStarted, LLMCalled, StreamDelta]


def test_listeners_keep_their_order_and_a_late_subscriber_or_an_unsubscribed_one_is_seen_at_the_next_event() -> None:
    events = EventBus()
    heard: list[str] = []
    first = events.subscribe(lambda event: heard.append("first"), TurnStarted)
    events.emit(TurnStarted(CHAT, "t1"))
    events.subscribe(lambda event: heard.append("second"))
    events.emit(TurnStarted(CHAT, "t2"))
    first()
    first()
    events.emit(TurnStarted(CHAT, "t3"))

    assert heard == ["first", "first", "second", "second"]


def test_a_failing_listener_is_logged_and_the_next_one_still_hears_the_event(caplog) -> None:
    events = EventBus()
    heard: list[Event] = []

    def broken(event: Event) -> None:
        raise RuntimeError("listener bug")

    events.subscribe(broken)
    events.subscribe(heard.append, LLMCalled)
    events.emit(called("m"))

    assert heard == [called("m")]
    assert "event listener failed on LLMCalled" in caplog.text
