"""Dead letters through the real gateway and the Telegram fake: listed with the platform's or model's reason, retried
(a reply re-sent, never regenerated; a message run again), dropped; a passing outage is outlasted by the later
rounds; the owner hears of them."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.bus import ChatRef, InboundMessage, Trust
from bot.bus.journal import Journal
from bot.cli.main import app as cli_app
from bot.config.paths import journal_path
from bot.events import DeliveryFailed, MessageFailed
from tests.e2e.test_health import get
from tests.fakes.openai_server import Error, FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot
from tests.support.harness import next_event

BLOCKED = "Forbidden: bot was blocked by the user"


def config_for(bot: TelegramBot) -> Path:
    path = bot.config.state_dir.parent / "config.yaml"
    path.write_text(
        f"workspace: {bot.config.workspace}\nstate_dir: {bot.config.state_dir}\n"
        f"owners: ['telegram:{OWNER}']\nchannels:\n  telegram:\n    enabled: true\n    token: x\n"
    )
    return path


async def cli(config: Path, *args: str) -> tuple[int, str]:
    result = await asyncio.to_thread(CliRunner().invoke, cli_app, ["--config", str(config), *args])
    return result.exit_code, result.output


async def letters(config: Path) -> list[dict[str, Any]]:
    code, output = await cli(config, "queue", "list", "--json")
    assert code == 0, output
    return list(json.loads(output))


async def test_a_reply_to_a_blocked_chat_is_listed_with_its_reason_and_resent_once_unblocked(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, health={"port": 0}) as running:
        await running.gateway.manager.ready("telegram")
        config = config_for(running)
        telegram.fail("sendMessage", status=403, description=BLOCKED)
        fake_llm.script(Text("Otters hold hands while they sleep."))
        failed = asyncio.create_task(next_event(running.gateway.agent.events, DeliveryFailed))
        telegram.text("tell me about otters", chat_id=OWNER, user_id=OWNER)
        await failed
        [notice] = await telegram.wait_for_sent(1)  # the owner hears of it (here, in the chat that came back)
        assert notice["text"].startswith("1 reply could not be delivered") and "relaybot queue list" in notice["text"]

        [letter] = await letters(config)
        assert letter["direction"] == "out" and letter["chat"] == f"telegram:{OWNER}" and letter["agent"] == "main"
        assert letter["reason"] == BLOCKED and letter["attempts"] == 1
        assert letter["preview"] == "Otters hold hands while they sleep."
        code, output = await cli(config, "queue", "list")
        heading, line = output.splitlines()
        assert code == 0 and heading.split() == ["id", "dir", "chat", "agent", "failed", "tries", "reason", "message"]
        assert line.split()[:4] == [letter["id"], "out", f"telegram:{OWNER}", "main"] and BLOCKED in line

        code, output = await cli(config, "status")
        assert "1 dead letters, the oldest 0s old (see `relaybot queue list`)" in output
        assert running.gateway.health_server is not None
        port = running.gateway.health_server.port
        status, ready = await get(port, "/readyz")
        assert status == 200 and json.loads(ready)["dead_letters"] == {"count": 1, "since": letter["when"]}
        assert 'relaybot_dead_letters{direction="out"} 1.0' in (await get(port, "/metrics"))[1]

        requests = len(fake_llm.requests)
        code, output = await cli(config, "queue", "retry", letter["id"])
        assert (code, output) == (0, "Retried 1 dead letter (now).\n")
        sent = await telegram.wait_for_sent(2)
        assert sent[1]["text"] == "Otters hold hands while they sleep."
        assert len(fake_llm.requests) == requests  # re-sent, never regenerated
        assert await letters(config) == []
        code, output = await cli(config, "queue", "retry", letter["id"])
        assert code == 1 and "Not dead letters" in output


async def test_an_outage_past_the_send_retries_is_outlasted_by_the_later_rounds(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram) as running:
        await running.gateway.manager.ready("telegram")
        # two rounds of five sends (the tests' retry policy)
        telegram.fail("sendMessage", status=502, description="Bad Gateway", times=10)
        fake_llm.script(Text("Yes, still here."))
        telegram.text("still there?", chat_id=OWNER, user_id=OWNER)
        [sent] = await telegram.wait_for_sent(1)
        assert sent["text"] == "Yes, still here."
        assert [wait for wait in running.sleep.waits if wait >= 60] == [60.0, 300.0]
        assert await letters(config_for(running)) == []


async def test_an_outage_outlasting_every_round_leaves_a_dead_letter_then_drop_forgets_it(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, ops={"dead_letter_notice": False}) as running:
        await running.gateway.manager.ready("telegram")
        config = config_for(running)
        telegram.fail("sendMessage", status=502, description="Bad Gateway", times=25)  # five rounds of five sends
        failed = asyncio.create_task(next_event(running.gateway.agent.events, DeliveryFailed))
        telegram.text("anyone?", chat_id=OWNER, user_id=OWNER)
        await failed
        assert [wait for wait in running.sleep.waits if wait >= 60] == [60.0, 300.0, 1800.0, 7200.0]
        [letter] = await letters(config)
        assert letter["attempts"] == 5
        assert letter["reason"] == "still failing after 5 attempts (Bad Gateway); 5 rounds over 2h"

        assert await cli(config, "queue", "drop", "--older-than", "1d") == (0, "Dropped 0 dead letters.\n")
        assert await cli(config, "queue", "drop", letter["id"]) == (0, "Dropped 1 dead letter.\n")
        assert await letters(config) == []
    assert telegram.sent == []  # with the notice off, the owner was not told


def seed_crashed_message(tmp_path: Path, text: str) -> InboundMessage:
    """A message whose turn started twice without finishing, as two kills of the process during it leave it."""
    message = InboundMessage(
        ChatRef("telegram", str(OWNER)), str(OWNER), text, Trust.OWNER, "Ann", platform_message_id="7"
    )
    journal = Journal(tmp_path / "state" / "journal.db")
    journal.open()
    journal.add_inbound(message)
    journal.begin_inbound([message.id])
    journal.begin_inbound([message.id])
    journal.close()
    return message


async def test_a_message_past_the_crash_limit_is_told_to_the_owner_listed_retried_at_the_next_start_and_answered(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    message = seed_crashed_message(tmp_path, "the question that crashed")
    async with TelegramBot(tmp_path, fake_llm, telegram) as running:
        config = config_for(running)
        assert journal_path(running.config) == tmp_path / "state" / "journal.db"
        apology, notice = sorted(
            await telegram.wait_for_sent(2), key=lambda sent: "stopped me twice" not in sent["text"]
        )
        assert "stopped me twice" in apology["text"]
        assert notice["text"].startswith("1 message could not be answered; they wait as dead letters")
        [letter] = await letters(config)
        assert (letter["id"], letter["direction"], letter["attempts"]) == (message.id, "in", 2)
        assert "crash limit" in letter["reason"] and letter["preview"] == "the question that crashed"
        assert fake_llm.requests == []

    code, output = await cli(config, "queue", "list")  # no gateway runs: read from the journal
    assert code == 0 and output.splitlines()[1].split()[:4] == [message.id, "in", f"telegram:{OWNER}", "main"]
    code, output = await cli(config, "queue", "retry", "--all")
    assert (code, output) == (0, "Retried 1 dead letter (at the gateway's next start).\n")

    async with TelegramBot(tmp_path, fake_llm, telegram) as running:
        sent = await telegram.wait_for_sent(3)
        assert sent[2]["text"].startswith("echo: ") and "the question that crashed" in sent[2]["text"]
        assert await letters(config_for(running)) == []


class Lines(logging.Handler):
    """Keeps the messages logged to it (on the logger itself: the CLI's logging setup replaces the root's handlers)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def retry_log() -> Iterator[list[str]]:
    """What `bot.ops.dead_letters` logs at INFO during the test."""
    logger, lines = logging.getLogger("bot.ops.dead_letters"), Lines()
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(lines)
    yield lines.lines
    logger.removeHandler(lines)
    logger.setLevel(level)


REFUSED_KEY = "its turn failed: the model call failed (ProviderAuthError)"


async def test_a_message_whose_turn_failed_is_apologised_for_once_listed_and_answered_when_retried(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, retry_log: list[str]
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram) as running:
        await running.gateway.manager.ready("telegram")
        config = config_for(running)
        fake_llm.script(Error(401, "Incorrect API key provided"), Error(401, "Incorrect API key provided"))
        telegram.text("when is high tide?", chat_id=OWNER, user_id=OWNER)
        first = await telegram.wait_for_sent(2)  # the apology, and the owner's notice (the sender is the owner)
        texts = sorted(sent["text"] for sent in first)
        assert texts[0].startswith("1 message could not be answered; they wait as dead letters")
        assert "key" in texts[1] and texts[1].startswith("Sorry")
        [letter] = await letters(config)
        assert (letter["direction"], letter["chat"], letter["attempts"]) == ("in", f"telegram:{OWNER}", 1)
        assert letter["reason"] == REFUSED_KEY and letter["preview"] == "when is high tide?"
        status = await cli(config, "status")
        assert "0 messages pending, 1 failed" in status[1]

        # The key is still refused: the retry fails again, waits again as one dead letter, with no second apology.
        failed_again = asyncio.create_task(next_event(running.gateway.agent.events, MessageFailed))
        assert await last_line(config, "queue", "retry", letter["id"]) == (0, "Retried 1 dead letter (now).")
        assert (await failed_again).message_id == letter["id"]
        assert [(d["id"], d["reason"]) for d in await letters(config)] == [(letter["id"], REFUSED_KEY)]

        # Mended: the retry runs the turn again and its answer goes out (not taken for the apology already sent).
        assert await last_line(config, "queue", "retry", "--all") == (0, "Retried 1 dead letter (now).")
        sent = await telegram.wait_for_sent(3)
        assert sent[2]["text"].startswith("echo: ") and "when is high tide?" in sent[2]["text"]
        assert await letters(config) == []
        assert sum(s["text"].startswith("Sorry") for s in telegram.sent) == 1
    assert retry_log == [f"[telegram:{OWNER}] dead letter {letter['id']} retried: running its turn again"] * 2


async def last_line(config: Path, *args: str) -> tuple[int, str]:
    """The exit code and last line of a CLI command (the in-process gateway's log lines, captured here, come first)."""
    code, output = await cli(config, *args)
    return code, output.splitlines()[-1]
