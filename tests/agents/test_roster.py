"""The router between a gateway's agents: lazy building, /agent, per-agent pairing, and reload's changes."""

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.agents.roster import AgentRoster
from bot.app.agent_wiring import AgentApp
from bot.app.rosters import agent_roster, answering
from bot.bus import ChatRef, InboundMessage, Trust
from bot.config.schema import Config
from tests.fakes.openai_server import FakeLLM
from tests.support.harness import make_config

BOUND = {"agent": "work", "channel": "telegram", "chat": "5"}


def config_with(tmp_path: Path, fake: FakeLLM, **overrides: object) -> Config:
    return make_config(tmp_path, fake, agents=[{"name": "work"}, {"name": "team", "pairing": "shared"}], **overrides)


@pytest_asyncio.fixture
async def roster(tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[AgentRoster]:
    config = config_with(tmp_path, fake_llm, bindings=[BOUND, {"agent": "team", "channel": "discord"}])
    default = AgentApp(config)
    roster = agent_roster(config, default)
    await default.start(warm=False)
    await roster.start()
    yield roster
    await roster.stop()
    await default.stop()


def message(chat: ChatRef, text: str = "hi") -> InboundMessage:
    return InboundMessage(chat, sender_id="9", text=text, trust=Trust.OWNER)


async def test_an_agent_is_built_on_its_first_message_only(roster: AgentRoster) -> None:
    assert list(roster.built) == ["main"]
    await roster.default.bus.publish_inbound(message(ChatRef("telegram", "5")))
    reply = await roster.default.bus.consume_outbound()
    assert reply.text.startswith("echo: ") and list(roster.built) == ["main", "work"]
    assert roster.built["work"].config.workspace.joinpath("SOUL.md").exists()  # seeded from the template


async def test_agent_command_names_the_agent_and_binding_without_building_it(roster: AgentRoster) -> None:
    await roster.default.bus.publish_inbound(message(ChatRef("telegram", "5"), "/agent"))
    reply = await roster.default.bus.consume_outbound()
    assert reply.text == "Agent work answers here, by bindings[0] (telegram chat 5)."
    await roster.default.bus.publish_inbound(message(ChatRef("telegram", "6"), "/agent"))
    reply = await roster.default.bus.consume_outbound()
    assert reply.text == "Agent main answers here: no binding matches this chat, so the default agent does."
    assert list(roster.built) == ["main"]


async def test_each_agent_has_its_own_pairing_unless_shared(roster: AgentRoster) -> None:
    work = roster.pairing_for(message(ChatRef("telegram", "5")))
    main = roster.pairing_for(message(ChatRef("telegram", "6")))
    team = roster.pairing_for(message(ChatRef("discord", "1")))
    code, _ = work.request("telegram", "77", "Bo")
    assert work.approve("telegram", code) == "77"
    assert work.is_approved("telegram", "77") and not main.is_approved("telegram", "77")
    assert team is main


async def test_a_reload_rebinds_removes_agents_and_grants_ask_agent(
    roster: AgentRoster, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    await roster.agent("work")
    config = make_config(tmp_path, fake_llm, agents=[{"name": "other", "tools": {"ask_agent": ["main"]}}])
    config = config.model_copy(update={"tools": config.tools.model_copy(update={"ask_agent": ["other"]})})
    roster.default.reconfigure(config)  # the gateway's part, before the roster's
    await roster.reconfigure(config, grace=0.1)
    assert list(roster.built) == ["main"]
    assert "ask_agent" in roster.default.registry.names()
    assert roster.route(message(ChatRef("telegram", "5"))).agent == "main"
    other = await roster.agent("other")
    assert "ask_agent" in other.registry.names()
    config = config.model_copy(update={"tools": config.tools.model_copy(update={"ask_agent": []})})
    roster.default.reconfigure(config)
    await roster.reconfigure(config)
    assert "ask_agent" not in roster.default.registry.names()


async def test_agents_share_the_bus_events_and_one_model_client_per_model_setting(roster: AgentRoster) -> None:
    work = await roster.agent("work")
    default = roster.default
    assert work.bus is default.bus and work.events is default.events
    assert work.providers is default.providers
    assert work.providers(work.config.llm) is default.providers(default.config.llm)  # same settings: one client
    assert len(default.providers.made) == 1


async def test_other_agents_chats_are_answered_while_an_agent_is_being_built(tmp_path: Path, fake_llm: FakeLLM) -> None:
    hanging = {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]}  # never says hello
    slow = {"name": "slow", "mcp_servers": {"hang": hanging}}
    config = make_config(
        tmp_path, fake_llm, agents=[slow], bindings=[{"agent": "slow", "channel": "telegram", "chat": "5"}]
    )
    default = AgentApp(config)
    roster = agent_roster(config, default)
    await default.start(warm=False)
    await roster.start()
    try:
        first, second = message(ChatRef("telegram", "5"), "one"), message(ChatRef("telegram", "6"), "two")
        for each in (first, second):
            await default.bus.publish_inbound(each)
        async with asyncio.timeout(60):
            reply = await default.bus.consume_outbound()
            assert reply.in_reply_to == second.id and "slow" not in roster.built  # answered while slow was built
            later = await default.bus.consume_outbound()
        assert later.in_reply_to == first.id and "slow" in roster.built
    finally:
        await roster.stop()
        await default.stop()


async def test_a_roster_of_one_answers_every_chat_with_its_agent_whatever_the_bindings(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    agent = AgentApp(config_with(tmp_path, fake_llm, bindings=[BOUND]))
    async with answering(agent) as roster:
        await agent.bus.publish_inbound(message(ChatRef("telegram", "5"), "/agent"))
        reply = await agent.bus.consume_outbound()
        assert reply.text == (
            "Agent main answers here: this chat always talks to it; the gateway's other agents (work, team) answer "
            "in the chats bound to them."
        )
        await agent.bus.publish_inbound(message(ChatRef("telegram", "5")))
        assert (await agent.bus.consume_outbound()).text.startswith("echo: ")
        assert list(roster.built) == ["main"]
