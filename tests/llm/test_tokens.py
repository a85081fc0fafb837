from bot.llm.tokens import estimate_each, estimate_tokens


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
