"""send_file: a workspace file reaches each platform's fake; the size limit is checked before any upload."""

from pathlib import Path

import pytest

from bot.bus import ChatRef, OutboundMessage, Trust
from bot.bus.messages import Attachment, outbound_from_json, outbound_to_json
from bot.errors import ToolError
from bot.tools.base import ToolContext
from bot.tools.send_file import MB, SendFileTool
from bot.tools.workspace import WorkspacePaths
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.gateway import OWNER, SLACK_OWNER, DiscordBot, SlackBot, TelegramBot

PNG = b"\x89PNG\r\n\x1a\nfake-image"
PDF = b"%PDF-1.4 fake report"


def put(workspace: Path, name: str, content: bytes) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / name).write_bytes(content)


def send_then_answer(fake_llm: FakeLLM, path: str, caption: str = "") -> None:
    fake_llm.script(ToolCalls((("send_file", {"path": path, "caption": caption}),)), Text("Sent it."))


async def test_telegram_gets_a_photo_and_a_document(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, {"streaming": "off"}) as bot:
        put(bot.config.workspace, "chart.png", PNG)
        put(bot.config.workspace, "report.pdf", PDF)
        await bot.gateway.manager.ready("telegram")
        send_then_answer(fake_llm, "chart.png", "The chart")
        telegram.text("send the chart", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(2)
        send_then_answer(fake_llm, "report.pdf")
        telegram.text("and the report", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(4)
    photo, _, document, _ = telegram.sent
    assert photo["photo"].content == PNG and photo["caption"] == "The chart"
    assert document["document"].content == PDF and document["document"].filename == "report.pdf"


async def test_discord_gets_an_attachment(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeDiscord() as discord, DiscordBot(tmp_path, fake_llm, discord, {"stream_interval": "40ms"}) as bot:
        put(bot.config.workspace, "report.pdf", PDF)
        await bot.gateway.manager.ready("discord")
        send_then_answer(fake_llm, "report.pdf", "Your report")
        discord.dm("send the report", user_id=42)
        await discord.wait_for_sent(2)
    (upload,) = discord.uploads
    assert upload["filename"] == "report.pdf" and upload["content"] == PDF
    assert discord.sent[0]["content"] == "Your report"


async def test_slack_gets_an_external_upload(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeSlack() as slack, SlackBot(tmp_path, fake_llm, slack) as bot:
        put(bot.config.workspace, "report.pdf", PDF)
        send_then_answer(fake_llm, "report.pdf", "Your report")
        slack.dm("send the report", user=SLACK_OWNER)
        await slack.wait_for_posted(1)
    (upload,) = slack.uploads
    assert upload["content"] == PDF and upload["filename"] == "report.pdf"
    assert upload["channel_id"] == "D0001" and upload["initial_comment"] == "Your report"


async def test_a_file_over_the_platform_limit_is_refused_before_upload(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"")
    with (tmp_path / "big.bin").open("wb") as big:
        big.truncate(11 * MB)
    sent: list[OutboundMessage] = []

    async def send(message: OutboundMessage) -> None:
        sent.append(message)

    tool = SendFileTool(WorkspacePaths(tmp_path, restrict=True))
    ctx = ToolContext(ChatRef("discord", "5001"), "42", Trust.OWNER, "turn", send)
    with pytest.raises(ToolError, match="discord accepts files up to 10 MB"):
        await tool.run({"path": "big.bin"}, ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        await tool.run({"path": "../secret"}, ctx)
    assert sent == []


def test_an_outbound_file_survives_the_journal_codec() -> None:
    message = OutboundMessage(
        ChatRef("slack", "D1"), "caption", finalises="turn-1", files=(Attachment("/ws/a.pdf", "application/pdf"),)
    )
    assert outbound_from_json(outbound_to_json(message)) == message
