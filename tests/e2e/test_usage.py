"""The ledger end to end: real litellm against the fake LLM, the CLI reading what the bot recorded."""

import json
from pathlib import Path

from typer.testing import CliRunner

from bot.bus import Trust
from bot.cli.main import app
from bot.config.schema import HeartbeatConfig
from bot.llm.prices import call_cost, price_table
from bot.scheduler.heartbeat import HeartbeatService, Outcome
from bot.tools.base import Tool, ToolContext
from tests.fakes.openai_server import Error, FakeLLM, Text, ToolCalls, echo
from tests.memory.test_memory import consolidating, save
from tests.support.harness import Harness


class BigTool(Tool):
    name = "big"
    description = "Returns a long text."

    async def run(self, args: dict, ctx: ToolContext) -> str:
        return "H" * 12_000 + "M" * 6_000 + "T" * 2_000


async def test_two_turns_a_minute_apart_send_byte_identical_system_prompts(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("first", created_at=1_700_000_000.0)
        await bot.ask("second", created_at=1_700_000_061.0)
    first, second = fake_llm.requests
    assert json.dumps(first["messages"][0]).encode() == json.dumps(second["messages"][0]).encode()
    assert json.dumps(first["tools"]).encode() == json.dumps(second["tools"]).encode()
    assert "2023-11-14 22:13" in first["messages"][-1]["content"]
    assert "2023-11-14 22:14" in second["messages"][-1]["content"]


async def test_a_long_tool_result_is_cut_for_the_model_and_kept_whole_in_the_session(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(ToolCalls((("big", {}),)), Text("done"))
    async with Harness(tmp_path, fake_llm, extra_tools=[BigTool()], llm={"context_window": 128_000}) as bot:
        await bot.ask("go")
        await bot.ask("again")
        stored = [m for m in bot.app.sessions.get("test:1").messages if m["role"] == "tool"]
    assert len(stored[0]["content"]) == 20_000
    for request in fake_llm.requests[1:]:
        (seen,) = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        assert len(seen) <= 16_000 and seen.startswith("HHH") and seen.endswith("TTT") and "characters cut" in seen


async def test_a_guest_is_answered_under_the_budget_and_refused_without_a_request_once_over(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with Harness(tmp_path, fake_llm, budgets={"guest": {"monthly_tokens": 5000}}) as bot:
        guest = {"chat": "telegram:9", "sender": "9", "trust": Trust.GUEST}
        assert (await bot.ask("hello", **guest)).startswith("echo:")
        assert (await bot.ask("x" * 20_000, **guest)).startswith("echo:")
        sent = len(fake_llm.requests)
        refusal = await bot.reply_to(await bot.send("and now?", **guest))
        assert refusal.kind == "error" and "monthly token budget" in refusal.text and "resets" in refusal.text
        assert len(fake_llm.requests) == sent
        assert (await bot.ask("owners are unlimited")).startswith("echo:")
        status = await bot.ask("/status", **guest)
    assert "Your role: guest" in status and "Budget left: 0 tokens this month" in status


def heartbeat_of(bot: Harness, deliver_to: str) -> HeartbeatService:
    """A heartbeat on the harness's agent, delivering to `deliver_to`."""
    loop = bot.app.loop
    config = HeartbeatConfig(deliver_to=deliver_to)
    return HeartbeatService(
        config,
        bot.config.workspace,
        "UTC",
        lambda: loop.last_owner_chat,
        loop.is_busy,
        bot.app.bus.publish_inbound,
        bot.app.events,
    )


async def test_heartbeat_and_consolidation_are_in_the_ledger_with_their_purpose(tmp_path: Path) -> None:
    reply = consolidating(lambda body: save("Talked.", "# Memory\n\n- Talked."))
    async with FakeLLM(default=reply) as fake, Harness(tmp_path, fake, agent={"memory_window": 4}) as bot:
        for i in range(3):
            await bot.ask(f"message {i}", chat="console:me")
        await bot.app.memory.idle()
        (bot.config.workspace / "HEARTBEAT.md").write_text("- check the backups")
        heartbeat = heartbeat_of(bot, "console:me")
        await heartbeat.tick()
        calls = bot.app.ledger.calls()
    purposes = {(c.purpose, c.sender) for c in calls}
    assert ("chat", "console:u1") in purposes
    assert ("consolidation", None) in purposes and ("heartbeat", None) in purposes
    assert {c.session_key for c in calls if c.purpose == "heartbeat"} == {"console:me"}
    assert all(c.prompt_tokens > 0 and not c.estimated for c in calls)


async def test_usage_json_totals_equal_what_the_fake_llm_reported(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("big", {}),)), Text("done"))
    model = "openai/gpt-4o-mini"
    async with Harness(tmp_path, fake_llm, extra_tools=[BigTool()], llm={"model": model}) as bot:
        await bot.ask("go")
        await bot.ask("streamed", stream=True)
        await bot.ask("hi", chat="telegram:5", sender="5", trust=Trust.USER)
    config = tmp_path / "config.yaml"
    config.write_text(f"workspace: {bot.config.workspace}\nstate_dir: {bot.config.state_dir}\n")
    result = CliRunner().invoke(app, ["--config", str(config), "usage", "--json", "--by", "sender"])
    assert result.exit_code == 0, result.output
    groups = json.loads(result.output)
    assert {g["key"] for g in groups} == {"test:u1", "telegram:5"}
    tokens_in = sum(u["prompt_tokens"] for u in fake_llm.reported)
    tokens_out = sum(u["completion_tokens"] for u in fake_llm.reported)
    assert sum(g["calls"] for g in groups) == len(fake_llm.requests) == len(fake_llm.reported) == 4
    assert sum(g["tokens_in"] for g in groups) == tokens_in
    assert sum(g["tokens_out"] for g in groups) == tokens_out
    expected = call_cost(model, tokens_in, tokens_out, 0, price_table())
    assert expected and abs(sum(g["cost_usd"] for g in groups) - expected) < 1e-6
    table = CliRunner().invoke(app, ["--config", str(config), "usage", "--by", "purpose", "--since", "7d", "--chart"])
    assert table.exit_code == 0 and "chat" in table.output and "#" in table.output


async def test_an_unknown_model_has_no_cost_rather_than_zero(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("hi")
        (call,) = bot.app.ledger.calls()
    assert call.model == "openai/fake-model" and call.cost_usd is None and call.outcome == "ok"


async def test_a_fallback_model_answers_when_the_primary_returns_503_every_time(tmp_path: Path) -> None:
    def primary_down(body: dict):
        return Error(503) if body["model"] == "fake-model" else echo(body)

    async with (
        FakeLLM(default=primary_down) as fake,
        Harness(tmp_path, fake, llm={"fallbacks": ["openai/backup-model"]}) as bot,
    ):
        assert (await bot.ask("anyone?")).startswith("echo:")
        calls = bot.app.ledger.calls()
    assert [(c.model, c.outcome) for c in calls] == [
        ("openai/fake-model", "ProviderUnavailable"),
        ("openai/backup-model", "ok"),
    ]
    assert [body["model"] for body in fake.requests] == ["fake-model"] * 4 + ["backup-model"]


async def test_usage_command_shows_sender_chat_and_for_owners_the_totals(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("hi", chat="telegram:5", sender="5", trust=Trust.USER)
        mine = await bot.ask("/usage", chat="telegram:5", sender="5", trust=Trust.USER)
        owner = await bot.ask("/usage")
    assert mine.startswith("Today: you ") and "This month:" in mine and "everyone" not in mine
    assert "cost unknown" in mine and "everyone" in owner


async def test_admins_pair_in_chat_and_others_cannot(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        code, _ = bot.app.pairing.request("telegram", "77", "Stranger")
        refused = await bot.ask(f"/pair approve {code}", chat="telegram:5", sender="5", trust=Trust.USER)
        assert "only admins" in refused and not bot.app.pairing.is_approved("telegram", "77")
        approved = await bot.ask(f"/pair approve {code}", chat="telegram:6", sender="6", trust=Trust.ADMIN)
        assert approved == "Approved telegram:77." and bot.app.pairing.is_approved("telegram", "77")
        elsewhere = await bot.ask("/pair revoke 77", chat="slack:C1", sender="U6", trust=Trust.ADMIN)
        assert elsewhere == "slack:77 was not paired."
        revoked = await bot.ask("/pair revoke 77", chat="telegram:6", sender="6", trust=Trust.ADMIN)
        assert revoked == "Revoked telegram:77."
    assert not [body for body in fake_llm.requests if "/pair" in json.dumps(body)]


async def test_background_work_pauses_at_its_cap_with_one_note_to_the_owner(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("owner chat"), Text("The backup failed."))
    async with Harness(tmp_path, fake_llm, budgets={"background": {"daily_tokens": 1}}) as bot:
        await bot.ask("hi", chat="telegram:1", sender="1")
        (bot.config.workspace / "HEARTBEAT.md").write_text("- check the backups")
        heartbeat = heartbeat_of(bot, "telegram:1")
        outcomes = [await heartbeat.tick() for _ in range(3)]
        note = await bot.wait_for(lambda out: "paused" in out.text)
    assert [o.value for o in outcomes] == ["delivered", Outcome.PAUSED.value, Outcome.PAUSED.value]
    assert len(fake_llm.requests) == 2
    assert note.chat.session_key == "telegram:1" and note.kind == "notice"
    assert len([out for out in bot.outbox if "paused" in out.text]) == 1


async def test_cached_prompt_tokens_from_a_real_response_reach_the_ledger_and_its_cost(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.cached_tokens = 64
    model = "openai/gpt-4o-mini"
    async with Harness(tmp_path, fake_llm, llm={"model": model}) as bot:
        await bot.ask("hi")
        await bot.ask("streamed", stream=True)
        calls = bot.app.ledger.calls()
    assert [call.cached_tokens for call in calls] == [64, 64]
    assert [u["prompt_tokens_details"]["cached_tokens"] for u in fake_llm.reported] == [64, 64]
    for call, reported in zip(calls, fake_llm.reported, strict=True):
        assert call.prompt_tokens == reported["prompt_tokens"] and not call.estimated
        prices = price_table()
        assert call.cost_usd == call_cost(model, call.prompt_tokens, call.completion_tokens, 64, prices)
        assert call.cost_usd < call_cost(model, call.prompt_tokens, call.completion_tokens, 0, prices)
