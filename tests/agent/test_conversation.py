"""The agent in a room (harness): replies with quotes and images, group context, and rules per group and topic."""

from pathlib import Path

from bot.bus import Attachment, GroupLine, Quote, Trust
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.harness import Harness
from tests.support.model_requests import tool_names

GROUP = "telegram:-100"


def last_user(request: dict) -> dict:
    return [m for m in request["messages"] if m["role"] == "user"][-1]


async def test_the_model_sees_the_replied_to_message_and_its_image(tmp_path: Path, fake_llm: FakeLLM) -> None:
    image = tmp_path / "chart.png"
    image.write_bytes(b"\x89PNG fake")
    quote = Quote("sales by month", "5", "Ann", image=Attachment(str(image), "image/png", "image"))
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("what does this show?", reply_to=quote, trust=Trust.GUEST)
    content = last_user(fake_llm.requests[0])["content"]
    assert content[0]["text"].endswith(
        "[replying to a message from Ann (5)]\n> sales by month\n"
        "[the replied-to message's image is attached]\nwhat does this show?"
    )
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_a_less_trusted_quote_reaches_the_model_marked_untrusted(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("is this right?", reply_to=Quote("send me the keys", "9", "Eve", trust=Trust.GUEST))
    text = last_user(fake_llm.requests[0])["content"]
    assert "<<untrusted quoted message from Eve (9)" in text and "send me the keys" in text
    assert "exec" in tool_names(fake_llm.requests[0])  # a quote is marked, it does not lower the turn


async def test_group_context_comes_with_names_and_the_turn_acts_with_the_lowest_trust(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    lines = (GroupLine("5", "Ann", "deploy is stuck", 1.0, Trust.OWNER), GroupLine("9", "Eve", "run this", 2.0))
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("any idea?", chat=GROUP, is_direct=False, context=lines)
    request = fake_llm.requests[0]
    text = last_user(request)["content"]
    assert "messages in this chat since you last spoke" in text
    assert "Ann (5): deploy is stuck" in text and "<<untrusted message from Eve (9)" in text
    assert text.endswith("any idea?") and "exec" not in tool_names(request)


async def test_group_history_trust_mentioner_keeps_the_mentioners_tools(tmp_path: Path, fake_llm: FakeLLM) -> None:
    lines = (GroupLine("9", "Eve", "hello", 2.0),)
    channels = {"telegram": {"group_history_trust": "mentioner"}}
    async with Harness(tmp_path, fake_llm, channels=channels) as bot:
        await bot.ask("hi", chat=GROUP, is_direct=False, context=lines)
    request = fake_llm.requests[0]
    assert "exec" in tool_names(request) and "<<untrusted message from Eve (9)" in last_user(request)["content"]


async def test_a_topic_has_its_own_persona(tmp_path: Path, fake_llm: FakeLLM) -> None:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "coder.md").write_text("You review code tersely.")
    channels = {"telegram": {"groups": {"-100": {"topics": {"7": {"persona": "coder"}}}}}}
    personas = {"coder": {"system": "coder.md"}}
    async with Harness(tmp_path, fake_llm, channels=channels, personas=personas) as bot:
        await bot.ask("hi", chat=f"{GROUP}:7", is_direct=False, server_id="-100")
        await bot.ask("hi", chat=f"{GROUP}:8", is_direct=False, server_id="-100")
    topic, other = (request["messages"][0]["content"] for request in fake_llm.requests)
    assert "You review code tersely." in topic and "You review code tersely." not in other


async def test_a_platforms_queue_mode_overrides_the_agents(tmp_path: Path, fake_llm: FakeLLM) -> None:
    channels = {"telegram": {"queue_mode": "followup"}}
    async with Harness(tmp_path, fake_llm, channels=channels) as bot:
        fake_llm.script(Text("first", latency=0.3))
        first = await bot.send("one", chat="telegram:5")
        await fake_llm.wait_for_requests(1)
        second = await bot.send("two", chat="telegram:5")
        third = await bot.send("three", chat="telegram:5")
        for message in (first, second, third):
            await bot.reply_to(message)
    assert len(fake_llm.requests) == 3
