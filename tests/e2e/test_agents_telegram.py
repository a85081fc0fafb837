"""Several agents in one gateway, end to end on Telegram: a topic binding, a reload that re-binds a chat, one agent
asking another, and an agent whose model is down failing only its own chats."""

from __future__ import annotations

import logging
import re
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.app.gateway import Gateway
from bot.config.loader import load_config
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from bot.usage.ledger import UsageLedger
from tests.fakes.openai_server import FakeLLM, Reply, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.files.samples import docx_file
from tests.support.polling import until

OWNER = 42
GROUP = -1001
WORK = {"name": "work", "llm": {"model": "openai/work-model"}}
HOME = {"name": "home", "llm": {"model": "openai/home-model"}}
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


class FileGateway:
    """A gateway in this process, read from a config file it can edit and reload, against the fake Telegram."""

    def __init__(self, home: Path, llm: FakeLLM, telegram: FakeTelegram, **config: Any) -> None:
        self.path = home / "config.yaml"
        self.data: dict[str, Any] = {
            "workspace": str(home / "workspace"),
            "state_dir": str(home / "state"),
            "owners": [f"telegram:{OWNER}"],
            "llm": {"model": "openai/fake-model", "api_key": "sk-test", "api_base": llm.base_url, "timeout": 10},
            "heartbeat": {"enabled": False},
            "shutdown_grace": 0.2,
            "channels": {"telegram": {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}},
            **config,
        }
        self.write()
        config_ = load_config(self.path, env={})
        retry = RetryPolicy(base_delay=0.0)
        self.gateway = Gateway(config_, ModelProvider(config_.llm, retry), channel_retry=retry, start_retry=retry)

    def write(self, **changes: Any) -> None:
        self.data.update(changes)
        self.path.write_text(yaml.safe_dump(self.data))

    async def __aenter__(self) -> FileGateway:
        await self.gateway.start()
        await self.gateway.manager.ready("telegram")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.gateway.stop()


def soul(workspace: Path, text: str) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "SOUL.md").write_text(text)


def system_prompt(request: dict) -> str:
    return str(request["messages"][0]["content"])


async def test_a_forum_topic_bound_to_an_agent_is_answered_by_it_and_the_rest_of_the_group_is_not(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    binding = {"agent": "work", "channel": "telegram", "chat": str(GROUP), "thread": "7"}
    async with FileGateway(tmp_path, fake_llm, telegram, agents=[WORK], bindings=[binding]):
        group = {"chat_id": GROUP, "user_id": OWNER, "chat_type": "supergroup"}
        telegram.text("@relay_bot in the topic", thread_id=7, **group)
        await telegram.wait_for_sent(1)
        telegram.text("@relay_bot in another topic", thread_id=8, **group)
        await telegram.wait_for_sent(2)
        assert [request["model"] for request in fake_llm.requests] == ["work-model", "fake-model"]
        assert telegram.sent[0]["message_thread_id"] == 7 and telegram.sent[0]["text"].startswith("echo: ")
    assert list((tmp_path / "state" / "agents" / "work" / "sessions").glob("*.jsonl"))


async def test_a_reload_re_binds_a_chat_removes_an_agent_and_says_a_new_token_needs_a_restart(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    async with FileGateway(tmp_path, fake_llm, telegram, agents=[WORK]) as bot:
        telegram.text("before", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)

        bot.write(bindings=[{"agent": "work", "channel": "telegram", "chat": str(OWNER)}])
        report = await bot.gateway.reload()
        assert report.error is None and "bindings" in report.applied
        telegram.text("after", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(2)
        assert [request["model"] for request in fake_llm.requests] == ["fake-model", "work-model"]
        assert "work" in bot.gateway.roster.built

        section = {**bot.data["channels"]["telegram"], "token": "999:OTHER"}
        bot.write(agents=[], bindings=[], channels={"telegram": section})
        with caplog.at_level(logging.INFO):
            report = await bot.gateway.reload()
        assert report.restart_needed == ["channels.telegram.token"]
        assert "channels.telegram.token changed; it takes effect after a restart" in caplog.text
        assert "reload: agent work removed" in caplog.text and "work" not in bot.gateway.roster.built
        telegram.text("removed", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(3)
        assert fake_llm.requests[-1]["model"] == "fake-model"


async def test_ask_agent_gets_the_other_agents_answer_from_its_own_memory_billed_to_the_asker(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    soul(tmp_path / "workspace", "You are Homey, the family assistant.")
    soul(tmp_path / "agents" / "work", "You are Worky, the work assistant.")
    (tmp_path / "agents" / "work" / "memory").mkdir()
    (tmp_path / "agents" / "work" / "memory" / "MEMORY.md").write_text("The team budget is 5 dollars.")
    fake_llm.script(
        ToolCalls((("ask_agent", {"name": "work", "message": "What is the team budget?"}),)),
        Text("The team budget is 5 dollars."),
        Text("Work says the budget is 5 dollars."),
    )
    async with FileGateway(tmp_path, fake_llm, telegram, agents=[WORK], tools={"ask_agent": ["work"]}):
        telegram.text("ask work about the budget", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)
        assert telegram.sent[0]["text"] == "Work says the budget is 5 dollars."
    asking, asked, final = fake_llm.requests
    assert asking["model"] == "fake-model" and "ask_agent" in str(asking.get("tools"))
    assert asked["model"] == "work-model" and "Worky" in system_prompt(asked) and "5 dollars" in system_prompt(asked)
    assert "Homey" not in system_prompt(asked) and "Worky" not in system_prompt(final)
    assert "5 dollars" not in system_prompt(final) and "ask_agent" not in str(asked.get("tools"))
    main_rows = UsageLedger(tmp_path / "state" / "usage.db").calls()
    assert [row.purpose for row in main_rows] == ["chat", "ask_agent", "chat"]
    assert UsageLedger(tmp_path / "state" / "agents" / "work" / "usage.db").calls() == []
    work_session = next((tmp_path / "state" / "agents" / "work" / "sessions").glob("*.jsonl")).read_text()
    assert "What is the team budget?" in work_session


async def test_an_agent_whose_model_is_down_fails_only_its_own_chats(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with FakeLLM() as down:
        dead_base = down.base_url
    work = {"name": "work", "llm": {"model": "openai/work-model", "api_base": dead_base, "timeout": 5}}
    binding = {"agent": "work", "channel": "telegram", "chat": str(GROUP)}
    async with FileGateway(tmp_path, fake_llm, telegram, agents=[work], bindings=[binding]):
        telegram.text("@relay_bot hello", chat_id=GROUP, user_id=OWNER, chat_type="supergroup")
        await until(lambda: any(sent["chat_id"] == GROUP for sent in telegram.sent), timeout=30)
        [apology] = [sent["text"] for sent in telegram.sent if sent["chat_id"] == GROUP]
        assert "language model" in apology  # the owner's DM may also hear of the dead letter
        telegram.text("hello", chat_id=OWNER, user_id=OWNER)
        await until(lambda: any(sent["text"].startswith("echo: ") for sent in telegram.sent), timeout=10)
        assert fake_llm.requests[-1]["model"] == "fake-model"


async def test_a_further_agent_beats_with_its_own_heartbeat_file_in_its_owners_chat(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    binding = {"agent": "work", "channel": "telegram", "chat": str(OWNER)}
    work = {**WORK, "heartbeat": {"enabled": True, "interval": "1h"}}
    async with FileGateway(tmp_path, fake_llm, telegram, agents=[work], bindings=[binding]) as bot:
        telegram.text("hello work", chat_id=OWNER, user_id=OWNER)  # the owner's DM with work: its beats' target
        await telegram.wait_for_sent(1)
        beats = bot.gateway.agent_heartbeats
        assert list(beats.services) == ["work"]  # the default agent's heartbeat is off here
        (tmp_path / "agents" / "work" / "HEARTBEAT.md").write_text("- [ ] check the invoices\n")
        fake_llm.script(Text("Two invoices are overdue."))
        outcome = await beats.services["work"].tick(3600.0)
        assert outcome.value == "delivered"
        assert telegram.sent[-1]["text"] == "Two invoices are overdue."
        beat = fake_llm.requests[-1]
        assert beat["model"] == "work-model" and "check the invoices" in str(beat["messages"][-1]["content"])


def read_attached(body: dict) -> Reply:
    """A model that reads the file its user attached with read_document, then repeats what it read."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return Text("I read: " + last["content"])
    file_id = re.search(r"\bf_[0-9a-f]{8}\b", str(last["content"])).group(0)  # type: ignore[union-attr]
    return ToolCalls((("read_document", {"file_id": file_id}),))


async def test_a_document_sent_to_one_agent_lands_in_its_workspace_and_another_agent_cannot_reach_it(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    plan = docx_file(tmp_path / "plan.docx", "Garden plan", ["Plant tomatoes in May."])
    bindings = [
        {"agent": "work", "channel": "telegram", "chat": str(OWNER)},
        {"agent": "home", "channel": "telegram", "chat": str(GROUP)},
    ]
    async with FileGateway(tmp_path, fake_llm, telegram, agents=[WORK, HOME], bindings=bindings):
        fake_llm.default = read_attached
        telegram.document(
            plan.read_bytes(), file_name="plan.docx", mime_type=DOCX, caption="what?", chat_id=OWNER, user_id=OWNER
        )
        (answer,) = await telegram.wait_for_sent(1)
        assert "Plant tomatoes in May." in answer["text"] and fake_llm.requests[-1]["model"] == "work-model"
        work = tmp_path / "agents" / "work"
        (saved,) = (work / "inbox").rglob("*.docx")
        assert (
            saved.parent == work / "inbox" / "telegram" / str(OWNER)
            and stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
        )
        staging = tmp_path / "state" / "incoming"
        assert stat.S_IMODE(staging.stat().st_mode) == 0o700 and not [p for p in staging.rglob("*") if p.is_file()]
        assert not (tmp_path / "workspace" / "inbox").exists()

        inside = str(saved.relative_to(work))
        fake_llm.script(
            ToolCalls(
                (
                    ("list_files", {}),
                    ("read_file", {"path": inside}),
                    ("read_file", {"path": f"../work/{inside}"}),
                    ("list_dir", {"path": "."}),
                )
            ),
            Text("Nothing of work's here."),
        )
        telegram.text("@relay_bot read the plan", chat_id=GROUP, user_id=OWNER, chat_type="supergroup")
        await telegram.wait_for_sent(2)
    home_turn = fake_llm.requests[-1]
    assert home_turn["model"] == "home-model"
    listed, beside, escaped, folder = [m["content"] for m in home_turn["messages"] if m["role"] == "tool"]
    assert "no files yet" in listed and "does not exist" in beside and "outside the workspace" in escaped
    assert "inbox" not in folder and "Plant tomatoes" not in str(home_turn["messages"])
