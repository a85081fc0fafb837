"""On the redis bus, gateways, workers and the CLI share pairing, rate counts, ignore notices and spend."""

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.access.flood import Verdict
from bot.access.policy import AccessPolicy, Ignore, SendPairingCode, Serve
from bot.access.redis_flood import RedisSenderRateLimit
from bot.access.redis_notices import RedisIgnoreNotices
from bot.access.redis_pairing import RedisPairingBook
from bot.app.agent_wiring import AgentApp
from bot.bus import ChatRef, InboundMessage, Trust
from bot.cli.main import app
from bot.cluster.redis import RedisState
from bot.config.channels.telegram import TelegramConfig
from bot.usage.ledger import CallRecord
from bot.usage.redis_ledger import RedisUsageLedger
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.slack_server import FakeSlack
from tests.support.cli_process import env_for
from tests.support.gateway import SLACK_OWNER, slack_section
from tests.support.harness import GatewayUnderTest, Harness, make_config

GUEST = {"chat": "telegram:9", "sender": "9", "trust": Trust.GUEST}


def dm(sender: str) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", sender), sender_id=sender, text="hi", sender_name="Ann")


def in_group(sender: str) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", "-100"), sender_id=sender, text="hi", is_direct=False, mentioned=True)


def gateway_policy(url: str) -> AccessPolicy:
    """One gateway's access policy, with its own connection to the shared Redis."""
    state = RedisState(url)
    return AccessPolicy("telegram", [], TelegramConfig(), RedisPairingBook(state), notices=RedisIgnoreNotices(state))


def test_a_stranger_keeps_one_code_across_gateways_and_an_approval_anywhere_admits_them(redis_url: str) -> None:
    first, standby = gateway_policy(redis_url), gateway_policy(redis_url)
    issued = first.decide(dm("77"))
    assert isinstance(issued, SendPairingCode) and not issued.repeated
    assert standby.decide(dm("77")) == SendPairingCode(issued.code, repeated=True)
    assert RedisPairingBook(RedisState(redis_url)).approve("telegram", issued.code) == "77"
    served = standby.decide(dm("77"))
    assert isinstance(served, Serve) and served.message.trust is Trust.USER
    assert RedisPairingBook(RedisState(redis_url)).revoke("telegram", "77")
    assert isinstance(first.decide(dm("77")), SendPairingCode)


def test_an_ignored_stranger_is_logged_by_one_gateway_only(redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    first, standby = gateway_policy(redis_url), gateway_policy(redis_url)
    with caplog.at_level(logging.INFO, logger="bot.access.policy"):
        for policy in (first, standby, first):
            assert isinstance(policy.decide(in_group("66")), Ignore)
    assert [r.getMessage() for r in caplog.records].count(
        "telegram: ignoring messages from 66 (unknown sender in a group)"
    ) == 1


def test_two_gateways_count_one_window_per_sender(redis_url: str) -> None:
    now = [1000.0]
    first = RedisSenderRateLimit(RedisState(redis_url), 3, lambda: now[0])
    standby = RedisSenderRateLimit(RedisState(redis_url), 3, lambda: now[0])
    message = InboundMessage(ChatRef("telegram", "-100"), sender_id="7", text="hi", trust=Trust.GUEST)
    verdicts = [limit.check(message) for limit in (first, standby, first, standby, first)]
    assert verdicts == [Verdict.PASS] * 3 + [Verdict.DROP_AND_NOTIFY, Verdict.DROP]
    now[0] += 60
    assert standby.check(message) is Verdict.PASS


async def test_spend_on_one_worker_counts_against_the_budget_on_another(
    tmp_path: Path, fake_llm: FakeLLM, redis_url: str
) -> None:
    cluster = {"bus": {"backend": "redis", "url": redis_url}, "budgets": {"guest": {"monthly_tokens": 5000}}}
    async with (
        Harness(tmp_path / "a", fake_llm, **cluster) as first,
        Harness(tmp_path / "b", fake_llm, **cluster) as second,
    ):
        assert (await first.ask("hello", **GUEST)).startswith("echo:")
        assert (await first.ask("x" * 20_000, **GUEST)).startswith("echo:")
        sent = len(fake_llm.requests)
        refusal = await second.reply_to(await second.send("and now?", **GUEST))
        assert refusal.kind == "error" and "monthly token budget" in refusal.text
        assert len(fake_llm.requests) == sent
        usage = await second.ask("/usage")
    spent = first.app.ledger.totals(0, sender="telegram:9").tokens
    assert spent >= 5000 and f"everyone {spent:,} tokens" in usage
    assert not (tmp_path / "a" / "state" / "usage.db").exists() and not (tmp_path / "b" / "state" / "usage.db").exists()


async def test_pair_on_a_worker_admits_a_stranger_who_wrote_to_a_gateway(
    tmp_path: Path, fake_llm: FakeLLM, redis_url: str
) -> None:
    bus = {"backend": "redis", "url": redis_url}
    gateway_app = AgentApp(make_config(tmp_path / "gateway", fake_llm, bus=bus))
    policy = AccessPolicy("telegram", [], TelegramConfig(), gateway_app.pairing)
    issued = policy.decide(dm("77"))
    assert isinstance(issued, SendPairingCode)
    async with Harness(tmp_path / "worker", fake_llm, bus=bus) as worker:
        assert await worker.ask(f"/pair approve {issued.code}", chat="telegram:1") == "Approved telegram:77."
    assert isinstance(policy.decide(dm("77")), Serve)
    assert not (tmp_path / "gateway" / "state" / "pairing.json").exists()
    await gateway_app.stores.aclose()


def redis_home(tmp_path: Path, url: str) -> dict[str, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.yaml").write_text(
        f"llm:\n  model: openai/x\ntimezone: UTC\nbus:\n  backend: redis\n  url: {url}\n  prefix: cli\n"
    )
    return env_for(tmp_path)


def test_cli_pairing_commands_use_redis(tmp_path: Path, redis_url: str) -> None:
    book = RedisPairingBook(RedisState(redis_url, "cli"))
    code, _ = book.request("telegram", "77", "Ann")
    runner, env = CliRunner(), redis_home(tmp_path, redis_url)
    listed = runner.invoke(app, ["pairing", "list"], env=env)
    assert code in listed.output and "user 77 (Ann)" in listed.output
    assert runner.invoke(app, ["pairing", "approve", "telegram", "WRONG234"], env=env).exit_code == 1
    approved = runner.invoke(app, ["pairing", "approve", "telegram", code], env=env)
    assert approved.exit_code == 0 and "77" in approved.output and book.is_approved("telegram", "77")
    assert "approved on telegram: 77" in runner.invoke(app, ["pairing", "list"], env=env).output
    assert runner.invoke(app, ["pairing", "revoke", "telegram", "77"], env=env).exit_code == 0
    assert not book.is_approved("telegram", "77")
    assert not (tmp_path / "state" / "pairing.json").exists()


def test_cli_usage_reads_every_workers_calls_from_redis(tmp_path: Path, redis_url: str) -> None:
    import time

    now = time.time()
    for worker, sender in enumerate(("telegram:1", "slack:U2")):
        ledger = RedisUsageLedger(RedisState(redis_url, "cli"), "UTC")
        ledger.record(
            CallRecord(now - worker, "x:1", sender, "chat", "openai/x", 100, 10 * worker, 0, 0.5, False, 0.1, "ok")
        )
    result = CliRunner().invoke(
        app, ["usage", "--by", "sender", "--since", "1d", "--json"], env=redis_home(tmp_path, redis_url)
    )
    assert result.exit_code == 0, result.output
    rows = {row["key"]: row for row in json.loads(result.output)}
    assert rows["telegram:1"]["tokens_in"] == 100 and rows["slack:U2"]["tokens_out"] == 10
    assert not (tmp_path / "state" / "usage.db").exists()


async def test_a_gateway_on_another_machine_catches_up_on_slack_where_the_last_one_stopped(
    tmp_path: Path, fake_llm: FakeLLM, redis_url: str
) -> None:
    bus = {"backend": "redis", "url": redis_url}
    async with FakeSlack() as slack:
        section = {"slack": slack_section(slack)}
        fake_llm.script(Text("first"))
        async with GatewayUnderTest(tmp_path / "a", fake_llm, [f"slack:{SLACK_OWNER}"], section, bus=bus) as first:
            await first.gateway.manager.ready("slack")
            slack.dm("hello", user=SLACK_OWNER)
            await slack.wait_for_posted(1)
        slack.message_while_offline("while you were away", user=SLACK_OWNER)
        fake_llm.script(Text("caught up"))
        async with GatewayUnderTest(tmp_path / "b", fake_llm, [f"slack:{SLACK_OWNER}"], section, bus=bus) as second:
            await second.gateway.manager.ready("slack")
            await slack.wait_for_posted(2)
    assert fake_llm.requests[-1]["messages"][-1]["content"].endswith("while you were away")
    assert not (tmp_path / "a" / "state" / "catchup").exists()


def test_codes_requested_at_once_by_many_gateways_are_all_kept(redis_url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    books = [RedisPairingBook(RedisState(redis_url), max_pending=50) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(lambda n: books[n % 4].request("telegram", str(n), ""), range(40)))
    assert len({code for code, _ in codes}) == 40
    assert sorted(int(entry.user_id) for entry in books[0].pending()) == list(range(40))


async def test_the_dashboard_shows_every_workers_spend_and_pairs_through_redis(
    tmp_path: Path, fake_llm: FakeLLM, redis_url: str
) -> None:
    import time

    import aiohttp

    from tests.channels.api.conftest import OWNER_TOKEN, ApiBot

    now = time.time()
    worker = RedisUsageLedger(RedisState(redis_url), "UTC")
    worker.record(CallRecord(now, "telegram:5", "telegram:5", "chat", "m", 100, 20, 0, None, False, 0.1, "ok"))
    gateway = RedisPairingBook(RedisState(redis_url))
    code, _ = gateway.request("telegram", "77", "Ann")
    async with ApiBot(tmp_path, fake_llm, bus={"backend": "redis", "url": redis_url}, timezone="UTC") as bot:
        auth = {"Authorization": f"Bearer {OWNER_TOKEN}"}
        async with aiohttp.ClientSession(headers=auth) as http:
            async with http.get(f"{bot.url}/admin/state") as response:
                state = await response.json()
            approve = {"op": "pairing.approve", "channel": "telegram", "code": code}
            async with http.post(f"{bot.url}/admin/action", json=approve) as response:
                assert (await response.json()) == {"ok": True, "user_id": "77"}
    assert state["usage"][-1]["tokens"] == 120
    assert [entry["code"] for entry in state["pairing"]["pending"]] == [code]
    assert gateway.is_approved("telegram", "77")
