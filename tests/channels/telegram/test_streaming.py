"""Live replies on Telegram, end to end: drafts in private chats, throttled edits in groups."""

import asyncio
import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.events import Delivered, TurnFinished
from channels.formatting import markdown_to_telegram_html
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.telegram_html import html_visible_text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot
from tests.support.harness import next_event

GROUP = -1001
REPLY = "Here is **the answer** you asked for, written slowly so that it streams in many small pieces."


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> AsyncIterator[TelegramBot]:
    async with TelegramBot(tmp_path, fake_llm, telegram, {"stream_interval": "40ms"}) as running:
        await running.gateway.manager.ready("telegram")
        yield running


def ask_in_group(telegram: FakeTelegram, text: str) -> dict:
    return telegram.text(f"@relay_bot {text}", chat_id=GROUP, user_id=OWNER, chat_type="supergroup")


async def delivered(bot: TelegramBot) -> Delivered:
    return await next_event(bot.gateway.agent.events, Delivered)


async def next_turn_delivered(bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    """A whole streamed turn more in the group: any edit still due on the earlier reply would have come by now."""
    fake_llm.script(Text(REPLY, chunk_delay=0.02))
    done = asyncio.create_task(delivered(bot))
    ask_in_group(telegram, "and again")
    await done


async def test_private_chat_shows_growing_drafts_then_one_message(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text(REPLY, chunk_delay=0.02))
    done = asyncio.create_task(delivered(bot))
    telegram.text("explain", chat_id=OWNER, user_id=OWNER)
    await done
    drafts = [d["text"] for d in telegram.drafts]
    assert len(drafts) >= 3
    assert all(later.startswith(earlier) and later != earlier for earlier, later in itertools.pairwise(drafts))
    assert all(REPLY.startswith(draft) for draft in drafts)
    assert len({d["draft_id"] for d in telegram.drafts}) == 1
    assert [s["text"] for s in telegram.sent] == [markdown_to_telegram_html(REPLY)]
    assert telegram.edits == []


async def test_group_reply_is_edited_in_place_and_never_after_the_final_text(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text(REPLY, chunk_delay=0.02))
    done = asyncio.create_task(delivered(bot))
    update = ask_in_group(telegram, "explain")
    await done
    (posted,) = telegram.sent
    assert posted["reply_parameters"]["message_id"] == update["message"]["message_id"]
    assert len(telegram.edits) >= 2
    assert all(edit["message_id"] == posted["message_id"] for edit in telegram.edits)
    final = telegram.edits[-1]
    assert final["text"] == markdown_to_telegram_html(REPLY) and final["parse_mode"] == "HTML"
    settled = len(telegram.edits)
    await next_turn_delivered(bot, fake_llm, telegram)
    assert len([e for e in telegram.edits if e["message_id"] == posted["message_id"]]) == settled
    assert telegram.drafts == []


async def test_long_live_reply_continues_in_a_second_message(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    paragraphs = [f"Paragraph {i}: " + "words and more words. " * 40 for i in range(6)]
    reply = "\n\n".join(p.strip() for p in paragraphs)
    assert len(reply) > 4096
    fake_llm.script(Text(reply, chunk_delay=0.0005))
    done = asyncio.create_task(delivered(bot))
    ask_in_group(telegram, "write a lot")
    await done
    assert len(telegram.sent) == 2
    finals = {}
    for call in [*telegram.sent, *telegram.edits]:
        assert len(html_visible_text(call["text"])) <= 4096
        finals[call["message_id"]] = html_visible_text(call["text"]) if call.get("parse_mode") else call["text"]
    first, second = (finals[s["message_id"]] for s in telegram.sent)
    assert first.startswith("Paragraph 0") and second.startswith("Paragraph ")
    assert " ".join((first + "\n\n" + second).split()) == " ".join(reply.split())


async def test_rate_limited_edit_waits_as_told(bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    telegram.fail("editMessageText", retry_after=3)
    fake_llm.script(Text(REPLY, chunk_delay=0.02))
    done = asyncio.create_task(delivered(bot))
    ask_in_group(telegram, "explain")
    await done
    assert 3 in bot.sleep.waits
    assert telegram.edits[-1]["text"] == markdown_to_telegram_html(REPLY)


async def test_tool_progress_line_is_replaced_by_the_answer(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(
        ToolCalls((("list_dir", {"path": "."}),)),
        Text("The folder is " + "quite " * 10 + "empty.", chunk_delay=0.02),
    )
    done = asyncio.create_task(delivered(bot))
    ask_in_group(telegram, "what is in the folder?")
    await done
    (posted,) = telegram.sent
    assert posted["text"] == "running list_dir…"
    assert telegram.edits[-1]["text"] == "The folder is " + "quite " * 10 + "empty."


async def test_no_reply_stays_silent_with_nothing_streamed(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text("NO_REPLY", chunk_delay=0.02), Text("I am here."))
    finished = asyncio.create_task(next_event(bot.gateway.agent.events, TurnFinished))
    ask_in_group(telegram, "just saying hi to everyone")
    assert (await finished).outcome == "silent"
    done = asyncio.create_task(delivered(bot))
    ask_in_group(telegram, "anyone there?")
    await done
    assert [s["text"] for s in telegram.sent] == ["I am here."]
    assert all("NO" not in e["text"] for e in telegram.edits)


async def test_a_turn_failing_mid_stream_is_marked_and_apologised_for(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text(REPLY, chunk_delay=0.02, cut_after=6, cut="drop"))
    ask_in_group(telegram, "explain")
    await telegram.wait_for_sent(3)  # the live message, its apology, and the owner's dead-letter notice in a DM
    live, apology = (sent for sent in telegram.sent if sent["chat_id"] == GROUP)
    final = telegram.edits[-1]
    assert final["message_id"] == live["message_id"]
    visible = html_visible_text(final["text"])
    assert visible.startswith("Here is the answer") and visible.endswith("(the reply was interrupted)")
    assert "Sorry" in apology["text"]


@pytest.mark.parametrize("show", [True, False])
async def test_reasoning_shows_in_the_live_message_only_when_asked_until_the_answer_replaces_it(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, show: bool
) -> None:
    thought = "The user wants the sum, so I add the two numbers and check the result once more before answering."
    fake_llm.script(Text(f"<think>{thought}</think>It is 5.", chunk_delay=0.02))
    async with TelegramBot(tmp_path, fake_llm, telegram, {"stream_interval": "40ms", "show_reasoning": show}) as bot:
        await bot.gateway.manager.ready("telegram")
        done = asyncio.create_task(delivered(bot))
        telegram.text("what is 2+3?", chat_id=OWNER, user_id=OWNER)
        await done
    shown = [d["text"] for d in telegram.drafts if d["text"].startswith("_The user")]
    if show:
        assert shown and all(thought.startswith(text.strip("_")) for text in shown)
        assert telegram.drafts[-1]["text"] == "It is 5."
    else:
        assert shown == [] and not any("user wants" in d["text"] for d in telegram.drafts)
    assert [s["text"] for s in telegram.sent] == ["It is 5."]


async def test_stop_sent_while_a_reply_streams_ends_the_stream_and_the_turn(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text(REPLY * 4, chunk_delay=0.05))
    finished = asyncio.create_task(next_event(bot.gateway.agent.events, TurnFinished))
    telegram.text("explain at length", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_call("sendMessageDraft", 2)
    telegram.text("/stop", chat_id=OWNER, user_id=OWNER)
    (stopped,) = await telegram.wait_for_sent(1)
    assert stopped["text"] == "Stopped."
    assert (await finished).outcome == "cancelled"
    drafts, stopped_drafts = len(telegram.drafts), {d["draft_id"] for d in telegram.drafts}
    fake_llm.script(Text("next"))
    telegram.text("barrier", chat_id=OWNER, user_id=OWNER)  # a whole turn later, the stopped one is still quiet
    await telegram.wait_for_sent(2)
    assert all(len(d["text"]) < len(REPLY * 4) for d in telegram.drafts)
    assert len([d for d in telegram.drafts if d["draft_id"] in stopped_drafts]) == drafts
    assert [s["text"] for s in telegram.sent] == ["Stopped.", "next"] and telegram.edits == []


async def test_a_final_text_equal_to_the_last_live_edit_is_neither_edited_again_nor_doubled(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    plain = "Plain words & nothing to format, streamed slowly so the last live edit already shows all of them."
    fake_llm.script(Text(plain, chunk_delay=0.02))
    done = asyncio.create_task(delivered(bot))
    ask_in_group(telegram, "say something plain")
    await done
    (posted,) = telegram.sent
    tries = sum(1 for method, _ in telegram.calls if method == "editMessageText")
    assert telegram.edits and telegram.edits[-1]["text"] == plain  # it grew by edits to the whole text
    assert tries == len(telegram.edits)  # and no edit was refused as "not modified"
    assert telegram.message(GROUP, posted["message_id"])["text"] == plain


async def answer_with_edits_refused(bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram, error: str) -> None:
    """A streamed group answer whose live edits Telegram refuses with `error` from the first one on."""
    fake_llm.script(Text(REPLY, chunk_delay=0.02))
    done = asyncio.create_task(delivered(bot))
    ask_in_group(telegram, "explain")
    await telegram.wait_for_call("editMessageText")
    telegram.fail("editMessageText", status=400, description=error, times=50)
    await done


async def test_a_live_message_that_cannot_be_edited_is_replaced_by_a_new_one(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    await answer_with_edits_refused(bot, fake_llm, telegram, "Bad Request: MESSAGE_ID_INVALID")
    live, final = telegram.sent
    assert telegram.message(GROUP, live["message_id"]) is None  # the broken live message was removed
    assert final["text"] == markdown_to_telegram_html(REPLY)


async def test_a_not_modified_answer_to_an_edit_is_success_never_a_second_message(
    bot: TelegramBot, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    not_modified = "Bad Request: message is not modified: specified new message content and reply markup are the same"
    await answer_with_edits_refused(bot, fake_llm, telegram, not_modified)
    assert len(telegram.sent) == 1 and "Sorry" not in telegram.sent[0]["text"]
