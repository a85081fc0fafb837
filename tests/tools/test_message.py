import re
from pathlib import Path

import pytest

from bot.bus import ChatRef, OutboundMessage, Trust
from bot.errors import ToolError
from bot.events import TurnFinished
from bot.tools.base import ToolContext
from bot.tools.message import MessageTool
from tests.fakes.openai_server import FakeLLM, Reply, Text, ToolCalls
from tests.support.harness import Harness, TurnConcurrency


async def test_without_to_it_goes_to_the_current_chat_as_progress(
    ctx: ToolContext, sent: list[OutboundMessage]
) -> None:
    assert await MessageTool().run({"text": "working on it"}, ctx) == "Sent to this chat."
    assert [(m.chat, m.text, m.kind, m.in_reply_to) for m in sent] == [
        (ctx.chat, "working on it", "progress", "turn-1")
    ]


async def test_owner_may_write_to_another_chat(ctx: ToolContext, sent: list[OutboundMessage]) -> None:
    assert await MessageTool().run({"text": "hi there", "to": "telegram:99:7"}, ctx) == "Sent to telegram:99:7."
    assert [(m.chat, m.kind, m.in_reply_to) for m in sent] == [(ChatRef("telegram", "99", "7"), "notice", None)]


async def test_guest_may_not_write_to_another_chat(sent: list[OutboundMessage]) -> None:
    async def send(message: OutboundMessage) -> None:
        sent.append(message)

    guest = ToolContext(ChatRef("telegram", "5"), "5", Trust.GUEST, "turn-2", send)
    with pytest.raises(ToolError, match="only the bot's owners can send messages to other chats"):
        await MessageTool().run({"text": "spam", "to": "telegram:6"}, guest)
    assert await MessageTool().run({"text": "mine", "to": "telegram:5"}, guest) == "Sent to this chat."
    assert [m.chat for m in sent] == [ChatRef("telegram", "5")]


async def test_malformed_target_is_explained(ctx: ToolContext, sent: list[OutboundMessage]) -> None:
    with pytest.raises(ToolError, match="not a chat; use channel:chat_id"):
        await MessageTool().run({"text": "hi", "to": "telegram"}, ctx)
    assert sent == []


async def finish(bot: Harness, chat: str = "test:1") -> None:
    """Once the turn has spoken, run one more in the chat: everything the first sent is delivered by its end."""
    await bot.wait_for(lambda m: m.kind == "progress")
    bot.fake.script(Text("ok"))
    await bot.ask("thanks", chat=chat)


def texts(bot: Harness, chat: str = "test:1") -> list[tuple[str, str]]:
    return [(m.kind, m.text) for m in bot.outbox if m.chat.session_key == chat]


async def test_final_reply_repeating_the_message_is_not_sent_again(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("message", {"text": "The answer is 42."}),)), Text("The  answer is 42."))
    async with Harness(tmp_path, fake_llm) as bot:
        outcomes = []
        bot.app.events.subscribe(lambda e: outcomes.append(e) if isinstance(e, TurnFinished) else None)
        question = await bot.send("what is the answer?")
        await finish(bot)
    assert texts(bot) == [("progress", "The answer is 42."), ("reply", "ok")]
    assert not [m for m in bot.outbox if m.in_reply_to == question.id and m.kind == "reply"]
    assert (outcomes[0].outcome, outcomes[0].replied) == ("answered by message", False)


async def test_silent_final_reply_after_a_message_is_not_sent(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("message", {"text": "Here you go: 42"}),)), Text(""))
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.send("answer please")
        await finish(bot)
    assert texts(bot) == [("progress", "Here you go: 42"), ("reply", "ok")]


async def test_final_reply_with_news_is_sent_after_a_progress_note(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("message", {"text": "Working on it..."}),)), Text("Done: 7 files renamed."))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("rename my files") == "Done: 7 files renamed."
    assert texts(bot) == [("progress", "Working on it..."), ("reply", "Done: 7 files renamed.")]


async def test_message_to_another_chat_does_not_replace_the_reply_here(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("message", {"text": "Dinner at 8", "to": "telegram:99"}),)), Text("Dinner at 8"))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("tell Sam: dinner at 8") == "Dinner at 8"
    assert texts(bot, "telegram:99") == [("notice", "Dinner at 8")]


async def test_concurrent_turns_each_message_their_own_chat(tmp_path: Path) -> None:
    def model(body: dict) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Text("done")
        chat = re.search(r"\[test DM (\w+)", last["content"]).group(1)
        return ToolCalls((("message", {"text": f"progress for {chat}"}),))

    async with FakeLLM(latency=0.2, default=model) as fake, Harness(tmp_path, fake) as bot:
        turns = TurnConcurrency(bot.app.events)
        first = await bot.send("go", chat="test:a")
        second = await bot.send("go", chat="test:b")
        await bot.reply_to(first)
        await bot.reply_to(second)
    assert turns.peak == 2
    assert texts(bot, "test:a") == [("progress", "progress for a"), ("reply", "done")]
    assert texts(bot, "test:b") == [("progress", "progress for b"), ("reply", "done")]
    progress = {m.chat.chat_id: m.in_reply_to for m in bot.outbox if m.kind == "progress"}
    assert progress == {"a": first.id, "b": second.id}
