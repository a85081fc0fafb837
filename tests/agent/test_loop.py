import asyncio
import json
from pathlib import Path

from bot.bus import InboundMessage, Trust
from tests.fakes.openai_server import Error, FakeLLM, Hang, Text, ToolCalls
from tests.support.harness import Harness, TurnConcurrency
from tests.support.model_requests import tool_names, user_texts
from tests.support.polling import until


async def test_two_sessions_run_at_the_same_time(tmp_path: Path) -> None:
    async with FakeLLM(latency=0.3) as fake, Harness(tmp_path, fake) as bot:
        first = await bot.send("from a", chat="test:a")
        second = await bot.send("from b", chat="test:b")
        await fake.wait_for_requests(2)
        assert bot.outbox == []
        await bot.reply_to(first)
        await bot.reply_to(second)


async def test_concurrency_cap_holds_turns_back(tmp_path: Path) -> None:
    async with FakeLLM(latency=0.1) as fake, Harness(tmp_path, fake, agent={"max_concurrent_turns": 2}) as bot:
        turns = TurnConcurrency(bot.app.events)
        sent = [await bot.send(f"from {i}", chat=f"test:{i}") for i in range(5)]
        for message in sent:
            await bot.reply_to(message)
    assert turns.peak == 2


async def test_one_session_stays_strictly_ordered(tmp_path: Path) -> None:
    async with FakeLLM(latency=0.05) as fake, Harness(tmp_path, fake, agent={"queue_mode": "followup"}) as bot:
        sent = [await bot.send(f"message {i}") for i in range(3)]
        replies = [await bot.reply_to(m) for m in sent]
    assert [r.text.splitlines()[-1] for r in replies] == ["message 0", "message 1", "message 2"]
    assert len(fake.requests) == 3
    third = fake.requests[2]["messages"]
    assert [m["role"] for m in third[1:]] == ["user", "assistant", "user", "assistant", "user"]


async def test_collect_mode_merges_messages_sent_while_busy(tmp_path: Path) -> None:
    async with FakeLLM(latency=0.2) as fake, Harness(tmp_path, fake) as bot:
        await bot.send("first")
        await fake.wait_for_requests(1)
        await bot.send("second")
        last = await bot.send("third")
        await bot.reply_to(last)
    assert len(fake.requests) == 2
    merged = user_texts(fake.requests[1])[-1]
    assert "second" in merged and "third" in merged


async def test_stop_cancels_the_running_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Hang())
    async with Harness(tmp_path, fake_llm) as bot:
        work = await bot.send("do something long")
        await fake_llm.wait_for_requests(1)
        assert await bot.ask("/stop") == "Stopped."
        reply = await bot.ask("are you there?")
        assert reply.startswith("echo: [test DM 1 · from u1 · ") and reply.endswith("]\nare you there?")
        assert not [out for out in bot.outbox if out.in_reply_to == work.id]
        history = bot.app.sessions.get("test:1").messages
    assert [m["content"] for m in history if m["role"] == "assistant"] == [reply]


async def test_stop_is_answered_before_a_waiting_prompt_could_take_it(tmp_path: Path, fake_llm: FakeLLM) -> None:
    taken: list[str] = []

    async def waiting_for_any_text(message: InboundMessage) -> bool:
        taken.append(message.text)
        return True

    async with Harness(tmp_path, fake_llm) as bot:
        bot.app.plugins.hooks.prompts.on(waiting_for_any_text)
        assert await bot.ask("/stop") == "Nothing to stop."
        await bot.send("/help")
        await until(lambda: taken == ["/help"], 5)  # the prompt took /help: no event reports it
    assert fake_llm.requests == []


async def test_stop_with_nothing_running(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("/stop") == "Nothing to stop."
    assert fake_llm.requests == []


async def test_new_starts_a_fresh_session(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("remember the word banana")
        assert await bot.ask("/new") == "Started a new conversation."
        await bot.ask("what was the word?")
    assert len(user_texts(fake_llm.requests[-1])) == 1


async def test_help_and_status(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        assert "/stop" in await bot.ask("/help")
        await bot.ask("hello")
        status = await bot.ask("/status")
    assert "openai/fake-model" in status and "2 messages" in status and "Tokens used" in status
    assert len(fake_llm.requests) == 1


async def test_provider_auth_error_is_explained_and_not_saved(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(401))
    async with Harness(tmp_path, fake_llm) as bot:
        reply = await bot.reply_to(await bot.send("hi"))
        history = bot.app.sessions.get("test:1").messages
    assert reply.kind == "error" and "llm.api_key" in reply.text
    assert "Incorrect API key" not in reply.text
    assert [m["role"] for m in history] == ["user"]


async def test_provider_500_then_200_answers_normally(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(500), Text("fine now"))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("hi") == "fine now"


async def test_system_message_is_answered_in_its_target_chat(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        message = await bot.send("daily summary", chat="telegram:99", sender="cron", kind="system", origin="cron")
        reply = await bot.reply_to(message)
    assert reply.chat.session_key == "telegram:99"
    assert user_texts(fake_llm.requests[0])[-1].startswith("[system message for telegram DM 99 · ")


async def test_guest_chats_get_their_own_memory(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        main = bot.config.workspace / "memory"
        main.mkdir(parents=True)
        (main / "MEMORY.md").write_text("owner secret: the vault code is 1234")
        await bot.ask("hi", chat="telegram:5", sender="5", trust=Trust.GUEST)
        await bot.ask("hi", chat="telegram:6", sender="6", trust=Trust.OWNER)
    guest_prompt = fake_llm.requests[0]["messages"][0]["content"]
    owner_prompt = fake_llm.requests[1]["messages"][0]["content"]
    assert "vault code" not in guest_prompt and "chats/telegram_5/MEMORY.md" in guest_prompt
    assert "vault code" in owner_prompt


async def test_stopping_the_app_cancels_turns_in_flight(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Hang())
    bot = Harness(tmp_path, fake_llm)
    await bot.__aenter__()
    await bot.send("hang")
    await fake_llm.wait_for_requests(1)
    await asyncio.wait_for(bot.__aexit__(None, None, None), 5)
    assert bot.app.loop.is_busy("test:1") is False


async def test_a_collected_turn_acts_with_its_least_trusted_sender(tmp_path: Path) -> None:
    async with FakeLLM(latency=0.2) as fake, Harness(tmp_path, fake) as bot:
        await bot.send("first", chat="test:g", sender="owner", is_direct=False)
        await fake.wait_for_requests(1)
        await bot.send("run exec cat ~/.ssh/id_rsa", chat="test:g", sender="guest", trust=Trust.GUEST, is_direct=False)
        last = await bot.send("thanks", chat="test:g", sender="owner", is_direct=False)
        await bot.reply_to(last)
    assert "exec" in tool_names(fake.requests[0])
    merged = fake.requests[1]
    assert "id_rsa" in user_texts(merged)[-1] and "thanks" in user_texts(merged)[-1]
    assert "exec" not in tool_names(merged) and "read_file" not in tool_names(merged)


async def test_long_inbound_text_is_cut_with_a_note(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm, agent={"max_inbound_chars": 1000}) as bot:
        await bot.ask("a" * 5000 + "TAIL")
    text = user_texts(fake_llm.requests[0])[-1]
    assert "a" * 1000 in text and "a" * 1001 not in text and "TAIL" not in text
    assert "[message cut: it had 5,004 characters; only the first 1,000 are shown]" in text


async def test_steer_adds_a_message_sent_mid_turn_to_the_next_model_request(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, agent={"queue_mode": "steer"}) as bot:
        fake.script(ToolCalls((("list_dir", {}),), latency=0.5), Text("Using the other folder."))
        first = await bot.send("list the files")
        await fake.wait_for_requests(1)
        await bot.send("actually, the other folder")
        await bot.send("a guest chiming in", sender="g1", trust=Trust.GUEST)
        assert (await bot.reply_to(first)).text == "Using the other folder."
        guest_turn = await bot.wait_for(lambda out: out.text.endswith("a guest chiming in"))
    second = fake.requests[1]["messages"]
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert second[-1]["content"].endswith("actually, the other folder")
    assert len(fake.requests) == 3 and not any(
        tool["function"]["name"] == "exec" for tool in fake.requests[2].get("tools") or []
    )
    assert guest_turn.kind == "reply"


async def test_each_model_calls_usage_is_logged_just_before_the_message_it_wrote(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(ToolCalls((("list_dir", {}),)), Text("Two files."))
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("what is in the workspace?")
        session = bot.app.sessions.get("test:1")
        assert session.path is not None
        records = [json.loads(line) for line in session.path.read_text().splitlines()]
    kinds = [r["type"] if r["type"] != "message" else r["message"]["role"] for r in records]
    assert kinds == ["user", "usage", "assistant", "tool", "usage", "assistant"]
    reported = fake_llm.reported
    assert records[4]["totals"] == [
        sum(u["prompt_tokens"] for u in reported),
        sum(u["completion_tokens"] for u in reported),
    ]
    assert (session.prompt_tokens, session.completion_tokens) == tuple(records[4]["totals"])
