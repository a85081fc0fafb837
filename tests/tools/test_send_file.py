"""send_file: a workspace file reaches each platform's fake; the size limit is checked before any upload."""

from pathlib import Path

import pytest

from bot.app.channel_kinds import upload_limits
from bot.bus import ChatRef, OutboundMessage, Trust
from bot.bus.messages import Attachment, outbound_from_json, outbound_to_json
from bot.errors import ToolError
from bot.tools.base import ToolContext
from bot.tools.send_file import MB, SendFileTool
from bot.tools.workspace import WorkspacePaths
from channels.platforms import KINDS
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, SLACK_OWNER, DiscordBot, SlackBot, TelegramBot

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


def send_many_then_answer(fake_llm: FakeLLM, paths: list[str], caption: str = "") -> None:
    fake_llm.script(ToolCalls((("send_file", {"paths": paths, "caption": caption}),)), Text("Sent them."))


async def test_telegram_gets_photos_as_an_album_and_documents_as_another(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, {"streaming": "off"}) as bot:
        for name, content in [("a.png", PNG), ("b.png", PNG + b"2"), ("c.png", PNG + b"3"), ("r.pdf", PDF)]:
            put(bot.config.workspace, name, content)
        put(bot.config.workspace, "s.pdf", PDF + b"2")
        await bot.gateway.manager.ready("telegram")
        send_many_then_answer(fake_llm, ["a.png", "r.pdf", "b.png", "c.png", "s.pdf"], "The set")
        telegram.text("send them all", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(6)
    albums = [method for method, _ in telegram.calls if method.startswith("send") and method != "sendChatAction"]
    assert albums == ["sendMediaGroup", "sendMediaGroup", "sendMessage"]  # photos, documents, then the reply
    photos, documents = telegram.sent[:3], telegram.sent[3:5]
    assert [s["photo"].content for s in photos] == [PNG, PNG + b"2", PNG + b"3"]
    assert [s["caption"] for s in photos] == ["The set", None, None]
    assert len({s["media_group_id"] for s in photos}) == 1
    assert [s["document"].content for s in documents] == [PDF, PDF + b"2"]
    assert documents[0]["media_group_id"] != photos[0]["media_group_id"]


async def test_discord_gets_several_attachments_on_one_message(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeDiscord() as discord, DiscordBot(tmp_path, fake_llm, discord, {"stream_interval": "40ms"}) as bot:
        put(bot.config.workspace, "a.png", PNG)
        put(bot.config.workspace, "r.pdf", PDF)
        await bot.gateway.manager.ready("discord")
        send_many_then_answer(fake_llm, ["a.png", "r.pdf"], "Both")
        discord.dm("send both", user_id=42)
        await discord.wait_for_sent(2)
    assert [(u["filename"], u["content"]) for u in discord.uploads] == [("a.png", PNG), ("r.pdf", PDF)]
    assert discord.sent[0]["content"] == "Both" and len(discord.sent[0]["attachments"]) == 2


async def test_slack_shares_several_files_in_one_message(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeSlack() as slack, SlackBot(tmp_path, fake_llm, slack) as bot:
        put(bot.config.workspace, "a.png", PNG)
        put(bot.config.workspace, "r.pdf", PDF)
        send_many_then_answer(fake_llm, ["a.png", "r.pdf"], "Both")
        slack.dm("send both", user=SLACK_OWNER)
        await slack.wait_for_posted(1)
    assert [(u["filename"], u["content"], u["share"]) for u in slack.uploads] == [("a.png", PNG, 1), ("r.pdf", PDF, 1)]
    assert slack.shares == 1 and slack.uploads[0]["initial_comment"] == "Both"


async def test_more_than_ten_files_or_none_are_refused(tmp_path: Path) -> None:
    async def send(message: OutboundMessage) -> None:
        raise AssertionError("nothing may be sent")

    tool = SendFileTool(WorkspacePaths(tmp_path, restrict=True), upload_limits())
    ctx = ToolContext(ChatRef("telegram", "5"), "42", Trust.OWNER, "turn", send)
    with pytest.raises(ToolError, match="give path"):
        await tool.run({}, ctx)
    with pytest.raises(ToolError, match="at most 10 files"):
        await tool.run({"paths": [f"{n}.png" for n in range(11)]}, ctx)


async def test_a_file_over_the_platform_limit_is_refused_before_upload(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"")
    with (tmp_path / "big.bin").open("wb") as big:
        big.truncate(11 * MB)
    sent: list[OutboundMessage] = []

    async def send(message: OutboundMessage) -> None:
        sent.append(message)

    tool = SendFileTool(WorkspacePaths(tmp_path, restrict=True), upload_limits())
    ctx = ToolContext(ChatRef("discord", "5001"), "42", Trust.OWNER, "turn", send)
    with pytest.raises(ToolError, match="discord accepts files up to 10 MB"):
        await tool.run({"path": "big.bin"}, ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        await tool.run({"path": "../secret"}, ctx)
    assert sent == []


async def test_a_platform_whose_kind_names_no_upload_limit_gets_no_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")

    async def send(message: OutboundMessage) -> None:
        raise AssertionError("nothing may be sent")

    limits = upload_limits()
    assert {name for name, kind in KINDS.items() if kind.upload_limit} == set(limits.by_platform)
    tool = SendFileTool(WorkspacePaths(tmp_path, restrict=True), limits)
    ctx = ToolContext(ChatRef("irc", "#room"), "42", Trust.OWNER, "turn", send)
    with pytest.raises(ToolError, match=r"this chat \(irc\) cannot receive files"):
        await tool.run({"path": "notes.txt"}, ctx)


def test_an_outbound_file_survives_the_journal_codec() -> None:
    message = OutboundMessage(
        ChatRef("slack", "D1"), "caption", finalises="turn-1", files=(Attachment("/ws/a.pdf", "application/pdf"),)
    )
    assert outbound_from_json(outbound_to_json(message)) == message


CHAT = ChatRef("telegram", "-100:7")  # a chat id with a character no folder name takes


async def sent_by(tmp_path: Path, trust: Trust, path: str) -> list[OutboundMessage]:
    sent: list[OutboundMessage] = []

    async def send(message: OutboundMessage) -> None:
        sent.append(message)

    tool = SendFileTool(WorkspacePaths(tmp_path, restrict=True), upload_limits())
    await tool.run({"path": path}, ToolContext(CHAT, "7", trust, "turn", send))
    return sent


def workspace_with_private_files(root: Path) -> None:
    for name in (
        "memory/MEMORY.md",
        "memory/chats/telegram_-100_7/MEMORY.md",
        "USER.md",
        "SOUL.md",
        "skills/notes/SKILL.md",
        "inbox/telegram/-100_8/photo.png",
        "outbox/telegram/-100_8/report.pdf",
        "inbox/telegram/-100_7/photo.png",
        "outbox/telegram/-100_7/report.pdf",
        "notes.txt",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(PNG)


@pytest.mark.parametrize("trust", [Trust.GUEST, Trust.USER])
@pytest.mark.parametrize("path", ["inbox/telegram/-100_7/photo.png", "outbox/telegram/-100_7/report.pdf"])
async def test_below_admin_a_chat_gets_its_own_inbox_and_outbox_files(tmp_path: Path, trust: Trust, path: str) -> None:
    workspace_with_private_files(tmp_path)
    [message] = await sent_by(tmp_path, trust, path)
    assert message.files[0].path == str(tmp_path / path)


@pytest.mark.parametrize(
    "path",
    [
        "memory/MEMORY.md",
        "memory/chats/telegram_-100_7/MEMORY.md",
        "USER.md",
        "SOUL.md",
        "skills/notes/SKILL.md",
        "inbox/telegram/-100_8/photo.png",
        "outbox/telegram/-100_8/report.pdf",
        "inbox/telegram/-100_7/../-100_8/photo.png",
        "notes.txt",
        "../outside.txt",
    ],
)
async def test_below_admin_nothing_else_is_sent(tmp_path: Path, path: str) -> None:
    workspace_with_private_files(tmp_path / "ws")
    (tmp_path / "outside.txt").write_text("secret")
    with pytest.raises(ToolError, match="does not belong to this chat|outside the workspace"):
        await sent_by(tmp_path / "ws", Trust.USER, path)


async def test_a_link_in_the_chats_own_folder_does_not_lead_out_of_it(tmp_path: Path) -> None:
    workspace_with_private_files(tmp_path)
    (tmp_path / "outbox/telegram/-100_7/memory.md").symlink_to(tmp_path / "memory/MEMORY.md")
    with pytest.raises(ToolError, match="does not belong to this chat"):
        await sent_by(tmp_path, Trust.USER, "outbox/telegram/-100_7/memory.md")


@pytest.mark.parametrize("trust", [Trust.ADMIN, Trust.OWNER])
async def test_admins_and_owners_send_any_workspace_file(tmp_path: Path, trust: Trust) -> None:
    workspace_with_private_files(tmp_path)
    assert len(await sent_by(tmp_path, trust, "memory/MEMORY.md")) == 1
