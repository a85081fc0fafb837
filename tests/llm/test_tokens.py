from typing import Any

from bot.llm.tokens import KeptEstimates, estimate_each, estimate_tokens


def test_estimating_many_messages_at_once_counts_each_as_alone() -> None:
    messages = [
        {"role": "system", "content": "s" * 300},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {}}]},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "result " * 40},
        {"role": "assistant", "content": None},
    ]
    assert estimate_each(messages) == [estimate_tokens(m) for m in messages]
    assert estimate_each(iter(messages[:1])) == [104]


def test_kept_estimates_of_a_growing_history_count_as_fresh_ones_even_after_a_change_in_place() -> None:
    kept = KeptEstimates()
    history: list[dict[str, Any]] = [{"role": "user", "content": "q" * 30}, {"role": "assistant", "content": "a" * 9}]
    assert kept.each(history) == estimate_each(history)
    call = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read", "arguments": "{}"}}]}
    history += [{"role": "user", "content": "more " * 20}, call, {"role": "tool", "content": "r" * 60}]
    assert kept.each(history) == estimate_each(history)
    history[1]["content"] = "a much longer answer than before, edited in place"
    call["tool_calls"][0]["function"]["arguments"] = '{"path": "' + "x" * 90 + '"}'
    history.append({"role": "assistant", "content": "done"})
    assert kept.each(history) == estimate_each(history)
    assert kept.each(history[2:]) == estimate_each(history[2:])  # consolidation moved the window's start
    assert kept.each([]) == []


def test_kept_estimates_are_bounded_by_the_messages_they_copy() -> None:
    kept = KeptEstimates(runs=64, max_bytes=3_000)
    chats = [[{"role": "user", "content": f"chat {n}"} for _ in range(4)] for n in range(20)]
    for history in chats:
        assert kept.each(history) == estimate_each(history)
    assert 4 <= kept.kept <= 10  # the last chats' four messages, within 3,000 bytes of about 300 each
