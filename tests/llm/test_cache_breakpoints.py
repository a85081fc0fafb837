from bot.agent.turn.tool_results import clip_text, clip_tool_message
from bot.llm.cache_breakpoints import mark_cache_breakpoints, takes_cache_breakpoints


def test_anthropic_and_openrouter_get_breakpoints_on_system_prompt_and_last_tool() -> None:
    assert takes_cache_breakpoints("anthropic/claude-3-5-sonnet-latest")
    assert takes_cache_breakpoints("openrouter/anthropic/claude-3.5-sonnet")
    assert not takes_cache_breakpoints("openai/gpt-4o-mini")
    tools = [{"type": "function", "function": {"name": n}} for n in ("a", "b")]
    request = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "u"}], "tools": tools}
    marked = mark_cache_breakpoints(request)
    assert marked["messages"][0]["content"] == [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}]
    assert marked["messages"][1] == {"role": "user", "content": "u"}
    assert "cache_control" not in marked["tools"][0] and marked["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert request["messages"][0]["content"] == "S" and "cache_control" not in tools[1]


def test_long_tool_results_keep_head_and_tail_with_a_note() -> None:
    text = "a" * 1000 + "b" * 1000
    clipped = clip_text(text, 500)
    assert len(clipped) <= 500 and clipped.startswith("aaa") and clipped.endswith("bbb") and "characters cut" in clipped
    assert clip_text("short", 500) == "short"
    user = {"role": "user", "content": text}
    assert clip_tool_message(user, 500) is user
