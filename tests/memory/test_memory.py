import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.agent.consolidation import keep_boundary, parse_update, plan_chunk
from bot.bus import Trust
from bot.llm.types import LLMResponse, ToolCall
from bot.memory.files import MemoryScope
from bot.sessions.store import SessionStore
from tests.fakes.openai_server import Error, FakeLLM, Hang, Reply, Text, ToolCalls, echo
from tests.support.harness import Harness

ENTRY = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d\] (.+)$", re.MULTILINE)
SOURCE = re.compile(r" \(from console:me, \d{4}-\d\d-\d\d\)$", re.MULTILINE)


def unsourced(memory: str) -> str:
    """MEMORY.md without the console chat's source suffixes."""
    return SOURCE.sub("", memory)


def is_consolidation(body: dict) -> bool:
    return any(tool["function"]["name"] == "save_memory" for tool in body.get("tools") or [])


def consolidating(reply: Callable[[dict], Reply]) -> Callable[[dict], Reply]:
    """Answer consolidation requests with `reply(body)` and chat requests with an echo."""
    return lambda body: reply(body) if is_consolidation(body) else echo(body)


def save(entry: str, memory: str) -> Reply:
    return ToolCalls((("save_memory", {"history_entry": entry, "memory_update": memory}),))


async def consolidated(tmp_path: Path, reply: Callable[[dict], Reply]) -> tuple[FakeLLM, Harness]:
    """Two console messages under a window of four, so `reply` answers one consolidation; the fake and bot, stopped."""
    async with (
        FakeLLM(default=consolidating(reply)) as fake,
        Harness(tmp_path, fake, agent={"memory_window": 4}) as bot,
    ):
        for i in range(2):
            await bot.ask(f"message {i}", chat="console:me")
        await bot.app.memory.idle()
    return fake, bot


def excerpt(body: dict) -> str:
    return body["messages"][1]["content"]


def consolidation_requests(fake: FakeLLM) -> list[dict]:
    return [body for body in fake.requests if is_consolidation(body)]


def chat_requests(fake: FakeLLM) -> list[dict]:
    return [body for body in fake.requests if not is_consolidation(body)]


async def test_consolidation_after_memory_window_writes_both_files_and_advances_the_offset(tmp_path: Path) -> None:
    reply = consolidating(lambda body: save("Talked about ducks and tea.", "# Memory\n\n- Likes ducks."))
    async with FakeLLM(default=reply) as fake, Harness(tmp_path, fake, agent={"memory_window": 6}) as bot:
        for word in ("one", "two", "three"):
            await bot.ask(f"message {word}", chat="console:me")
        await bot.app.memory.idle()
        await bot.ask("message four", chat="console:me")
        session = bot.app.sessions.get("console:me")
    memory = bot.config.workspace / "memory"
    assert unsourced((memory / "MEMORY.md").read_text()) == "# Memory\n\n- Likes ducks.\n"
    assert SOURCE.search((memory / "MEMORY.md").read_text())
    assert ENTRY.findall((memory / "HISTORY.md").read_text()) == ["Talked about ducks and tea."]
    assert session.consolidated == 4
    assert SessionStore(bot.config.state_dir / "sessions").get("console:me").consolidated == 4
    [request] = consolidation_requests(fake)
    assert [t["function"]["name"] for t in request["tools"]] == ["save_memory"]
    assert "message one" in excerpt(request) and "message two" in excerpt(request)
    assert "message three" not in excerpt(request)
    after = chat_requests(fake)[-1]["messages"]
    assert "- Likes ducks." in after[0]["content"]
    history, latest = json.dumps(after[1:-1]), after[-1]["content"]
    assert "message one" not in history and "message three" in history
    assert "[From earlier conversations" in latest and "u1: message one" in latest  # recalled, not in the history


@pytest.mark.parametrize(
    "failure", [Error(500), Text("I would rather not summarise this."), save("", "# Memory\n- wiped")]
)
async def test_failed_consolidation_leaves_files_and_offset_untouched(tmp_path: Path, failure: Reply) -> None:
    async with (
        FakeLLM(default=consolidating(lambda body: failure)) as fake,
        Harness(tmp_path, fake, agent={"memory_window": 4}) as bot,
    ):
        memory = bot.config.workspace / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("original facts\n")
        for i in range(3):
            await bot.ask(f"message {i}", chat="console:me")
            await bot.app.memory.idle()
        session = bot.app.sessions.get("console:me")
    assert (memory / "MEMORY.md").read_text() == "original facts\n"
    assert not (memory / "HISTORY.md").exists()
    assert session.consolidated == 0
    attempts = {json.dumps(body["messages"]) for body in consolidation_requests(fake)}
    assert len(attempts) == 2  # tried after the second turn, and again after the third


async def test_empty_memory_update_keeps_memory_but_logs_history(tmp_path: Path) -> None:
    reply = consolidating(lambda body: save("Small talk about the weather.", "  "))
    async with FakeLLM(default=reply) as fake, Harness(tmp_path, fake, agent={"memory_window": 4}) as bot:
        memory = bot.config.workspace / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- The owner's name is Ada.\n")
        for i in range(2):
            await bot.ask(f"message {i}", chat="console:me")
        await bot.app.memory.idle()
        session = bot.app.sessions.get("console:me")
    assert (memory / "MEMORY.md").read_text() == "- The owner's name is Ada.\n"
    assert ENTRY.findall((memory / "HISTORY.md").read_text()) == ["Small talk about the weather."]
    assert session.consolidated == 2


async def test_json_in_a_text_answer_is_accepted(tmp_path: Path) -> None:
    text = 'Here you go: {"history_entry": "Planned a trip to Lisbon.", "memory_update": "- Trip: Lisbon in May"}'
    fake, bot = await consolidated(tmp_path, lambda body: Text(text))
    memory = bot.config.workspace / "memory"
    assert unsourced((memory / "MEMORY.md").read_text()) == "- Trip: Lisbon in May\n"
    assert ENTRY.findall((memory / "HISTORY.md").read_text()) == ["Planned a trip to Lisbon."]


async def test_oversized_memory_is_sent_back_once_to_be_condensed(tmp_path: Path) -> None:
    answers = iter([save("Long chat.", "- fact\n" * 2000), save("Long chat.", "- the one fact that matters")])
    fake, bot = await consolidated(tmp_path, lambda body: next(answers))
    _, second = consolidation_requests(fake)
    note = second["messages"][-1]
    assert note["role"] == "tool" and "must stay under 6000" in note["content"]
    assert second["messages"][-2]["tool_calls"][0]["id"] == note["tool_call_id"]
    memory = bot.config.workspace / "memory"
    assert unsourced((memory / "MEMORY.md").read_text()) == "- the one fact that matters\n"
    assert len(ENTRY.findall((memory / "HISTORY.md").read_text())) == 1


async def test_chats_of_different_users_never_see_each_others_memory(tmp_path: Path) -> None:
    def remember_secret(body: dict) -> Reply:
        secret = re.search(r"secret is (\w+)", excerpt(body)).group(1)
        return save(f"Heard the secret {secret}.", f"- The secret is {secret}.")

    async with (
        FakeLLM(default=consolidating(remember_secret)) as fake,
        Harness(tmp_path, fake, agent={"memory_window": 4}) as bot,
    ):
        for user, secret in (("5", "alpha"), ("6", "beta")):
            for _ in range(2):
                await bot.ask(f"my secret is {secret}", chat=f"telegram:{user}", sender=user, trust=Trust.GUEST)
        await bot.app.memory.idle()
        for user in ("5", "6"):
            await bot.ask("what do you know?", chat=f"telegram:{user}", sender=user, trust=Trust.GUEST)
    for request in consolidation_requests(fake):
        assert ("alpha" in excerpt(request)) != ("beta" in excerpt(request))
    prompt_a, prompt_b = (body["messages"][0]["content"] for body in chat_requests(fake)[-2:])
    assert "The secret is alpha." in prompt_a and "beta" not in prompt_a
    assert "The secret is beta." in prompt_b and "alpha" not in prompt_b
    chats = bot.config.workspace / "memory" / "chats"
    assert sorted(p.name for p in chats.iterdir()) == ["telegram_5", "telegram_6"]
    assert not (bot.config.workspace / "memory" / "MEMORY.md").exists()


async def test_new_archives_the_session_and_consolidates_all_of_it(tmp_path: Path) -> None:
    reply = consolidating(lambda body: save("Discussed the garden.", "- Grows tomatoes."))
    async with FakeLLM(default=reply) as fake, Harness(tmp_path, fake) as bot:
        await bot.ask("I grow tomatoes", chat="console:me")
        await bot.ask("and basil", chat="console:me")
        assert await bot.ask("/new", chat="console:me") == "Started a new conversation."
        await bot.app.memory.idle()
        await bot.ask("hello again", chat="console:me")
    [request] = consolidation_requests(fake)
    assert "I grow tomatoes" in excerpt(request) and "and basil" in excerpt(request)
    memory = bot.config.workspace / "memory"
    assert unsourced((memory / "MEMORY.md").read_text()) == "- Grows tomatoes.\n"
    [archived] = (bot.config.state_dir / "sessions").glob("*.archived.jsonl")
    records = [json.loads(line) for line in archived.read_text().splitlines()]
    assert records[-1] == {"type": "consolidated", "upto": 4}
    last = chat_requests(fake)[-1]["messages"]
    assert "- Grows tomatoes." in last[0]["content"] and len(last) == 2


async def test_a_hanging_consolidation_never_blocks_replies(tmp_path: Path) -> None:
    async with (
        FakeLLM(default=consolidating(lambda body: Hang())) as fake,
        Harness(tmp_path, fake, agent={"memory_window": 4}) as bot,
    ):
        for i in range(2):
            await bot.ask(f"message {i}", chat="console:me")
        await fake.wait_for_requests(3)
        reply = await bot.ask("still there?", chat="console:me")
        assert reply.startswith("echo: [console DM me · from u1 · ") and reply.endswith("]\nstill there?")
        await fake.stop()  # the hung request fails, so the consolidation gives up and keeps the offset
        await bot.app.memory.idle()
        assert bot.app.sessions.get("console:me").consolidated == 0


def test_history_file_is_one_greppable_line_per_entry(tmp_path: Path) -> None:
    scope = MemoryScope(tmp_path / "memory", is_main=True)
    scope.append_history("[2025-01-02 10:00] First.")
    scope.append_history("[2025-01-03 11:00] Second.")
    text = scope.history_file.read_text()
    assert text == "# History\n\n[2025-01-02 10:00] First.\n\n[2025-01-03 11:00] Second.\n"
    scope.record([], "- fact\n")
    assert scope.read_memory() == "- fact\n"
    assert sorted(p.name for p in scope.directory.iterdir()) == ["HISTORY.md", "MEMORY.md"]


def test_parse_update_reads_tool_calls_text_json_and_rejects_the_rest() -> None:
    arguments = {"history_entry": "Did  things.\n", "memory_update": "```markdown\n- fact\n```"}
    call = ToolCall("c1", "save_memory", arguments, json.dumps(arguments))
    update = parse_update(LLMResponse("", (call,)))
    assert update is not None and update.history_entry == "Did things." and update.memory == "- fact"
    fenced = 'Sure.\n```json\n{"history_entry": "A.", "memory_update": "- b"}\n```'
    assert parse_update(LLMResponse(fenced)).memory == "- b"
    assert parse_update(LLMResponse("I cannot {do} that")) is None
    assert parse_update(LLMResponse('{"memory_update": "- only memory"}')) is None
    assert parse_update(LLMResponse('{"history_entry": "A.", "memory_update": ["list"]}')) is None


def test_chunks_end_at_a_user_message_and_respect_the_size_limit() -> None:
    messages = [
        {"role": "user", "content": "u0"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {"name": "t", "arguments": ""}}]},
        {"role": "tool", "tool_call_id": "a", "name": "t", "content": "r" * 1000},
        {"role": "assistant", "content": "a3"},
        {"role": "user", "content": "u4"},
        {"role": "assistant", "content": "a5"},
        {"role": "user", "content": "u6"},
        {"role": "assistant", "content": "a7"},
    ]
    assert keep_boundary(messages, 0, keep=3) == 6
    assert keep_boundary(messages, 0, keep=1) == 6
    assert keep_boundary(messages, 6, keep=1) is None
    end, text = plan_chunk(messages, 0, 6, max_chars=10_000)
    assert end == 6 and "USER: u4" in text and "r" * 300 + " […]" in text and "r" * 301 not in text
    assert plan_chunk(messages, 0, 6, max_chars=380)[0] == 4
    end, text = plan_chunk(messages, 0, 6, max_chars=50)
    assert end == 4 and len(text) <= 50 + len(" […]")
    assert plan_chunk(messages, 6, 8, max_chars=10_000)[0] == 8


async def test_an_edit_to_memory_during_consolidation_wins_and_is_retried_later(tmp_path: Path) -> None:
    memory_file = tmp_path / "workspace" / "memory" / "MEMORY.md"

    def edit_meanwhile(body: dict) -> Reply:
        memory_file.write_text("- edited by the owner just now\n")
        return save("Chatted.", "- stale rewrite")

    async with (
        FakeLLM(default=consolidating(edit_meanwhile)) as fake,
        Harness(tmp_path, fake, agent={"memory_window": 4}) as bot,
    ):
        memory_file.parent.mkdir(parents=True)
        memory_file.write_text("- as it was\n")
        for i in range(2):
            await bot.ask(f"message {i}", chat="console:me")
        await bot.app.memory.idle()
        session = bot.app.sessions.get("console:me")
    assert memory_file.read_text() == "- edited by the owner just now\n"
    assert session.consolidated == 0 and not memory_file.with_name("HISTORY.md").exists()


async def test_after_a_failure_consolidation_waits_for_more_messages_before_trying_again(tmp_path: Path) -> None:
    async with (
        FakeLLM(default=consolidating(lambda body: Text("no tools for me"))) as fake,
        Harness(tmp_path, fake, agent={"memory_window": 16}) as bot,
    ):
        attempts_after = []
        for turn in range(1, 13):
            await bot.ask(f"message {turn}", chat="console:me")
            await bot.app.memory.idle()
            attempts_after.append(len(consolidation_requests(fake)))
    assert attempts_after == [0] * 7 + [1, 1, 2, 2, 3]


async def test_prompt_tells_owners_and_guests_how_to_search_their_own_history(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("hi", chat="telegram:1", sender="1", trust=Trust.OWNER)
        await bot.ask("hi", chat="telegram:2", sender="2", trust=Trust.GUEST)
    owner, guest = (body["messages"][0]["content"] for body in fake_llm.requests)
    assert "recall('words or a question'), or exec `grep -i -C1 'keyword' memory/HISTORY.md` or read_file it" in owner
    assert "memory/chats/telegram_2/HISTORY.md" in guest and "recall('words or a question') searches this chat" in guest
    assert "recall" in {tool["function"]["name"] for tool in fake_llm.requests[1]["tools"]}
