"""list_files and read_document as tools: a chat's own files by id, for every role; another chat's id is no file."""

from dataclasses import replace
from pathlib import Path

import pytest

from bot.app.channel_kinds import upload_limits
from bot.bus import ChatRef, Trust
from bot.errors import ToolError
from bot.files.records import FileBook
from bot.llm.types import ToolCall
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.chat_files import ChatFiles
from bot.tools.documents import ListFilesTool, ReadDocumentTool
from tests.files.samples import xlsx_file


def context(tmp_path: Path, chat_id: str, trust: Trust = Trust.GUEST) -> ToolContext:
    async def send(message: object) -> None:
        raise AssertionError("no message expected")

    memory = tmp_path / "workspace" / "memory" / "chats" / f"telegram_{chat_id}"
    return ToolContext(ChatRef("telegram", chat_id), "u", trust, "t", send, memory_dir=memory)


@pytest.fixture
def files(tmp_path: Path) -> ChatFiles:
    return ChatFiles(FileBook(tmp_path / "files.db"), tmp_path / "workspace")


async def test_a_guest_lists_and_reads_its_chats_workbook(tmp_path: Path, files: ChatFiles) -> None:
    ctx = context(tmp_path, "5")
    path = xlsx_file(tmp_path / "AgAD.xlsx", {"Costs": [["Item", "EUR"], ["Rent", 900]]})
    record = files.register(ctx.memory_dir, ctx.chat, path, "costs.xlsx")
    registry = ToolRegistry([ListFilesTool(files), ReadDocumentTool(files)])
    assert registry.names(Trust.GUEST) == ["list_files", "read_document"]
    listing = await registry.execute(ToolCall("1", "list_files", {}), ctx)
    assert (
        f"- {record.id} costs.xlsx (application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        in listing.content
    )
    read = await registry.execute(ToolCall("2", "read_document", {"file_id": record.id}), ctx)
    assert not read.is_error and "| Rent | 900 |" in read.content


async def test_a_file_id_from_another_chat_is_no_such_file(tmp_path: Path, files: ChatFiles) -> None:
    mine, theirs = context(tmp_path, "5"), context(tmp_path, "6", Trust.OWNER)
    path = tmp_path / "secret.txt"
    path.write_text("the other chat's secret")
    record = files.register(theirs.memory_dir, theirs.chat, path)
    with pytest.raises(ToolError, match=f"no such file: '{record.id}'"):
        await ReadDocumentTool(files).run({"file_id": record.id}, mine)
    assert await ListFilesTool(files).run({}, mine) == "This chat has no files yet."


async def test_a_document_that_takes_too_long_is_given_up_without_stalling_the_turn(
    tmp_path: Path, files: ChatFiles
) -> None:
    ctx = context(tmp_path, "5")
    path = tmp_path / "big.md"
    path.write_text("# a\n" * 10)
    record = files.register(ctx.memory_dir, ctx.chat, path)
    with pytest.raises(ToolError, match="took longer than 0 s to read and was given up on"):
        await ReadDocumentTool(files, timeout=0).run({"file_id": record.id}, ctx)


async def test_a_user_sends_back_a_file_of_the_chat_by_its_id_but_never_another_chats(
    tmp_path: Path, files: ChatFiles
) -> None:
    from bot.bus import OutboundMessage
    from bot.tools.send_file import SendFileTool
    from bot.tools.workspace import WorkspacePaths

    sent: list[OutboundMessage] = []

    async def send(message: OutboundMessage) -> None:
        sent.append(message)

    ctx = replace(context(tmp_path, "5", Trust.USER), send=send)
    made = tmp_path / "workspace" / "outbox" / "telegram" / "5" / "summary-20261128.csv"
    made.parent.mkdir(parents=True)
    made.write_text("a,b\n")
    record = files.register(ctx.memory_dir, ctx.chat, made, "summary.csv", origin="made")
    other = context(tmp_path, "6")
    (tmp_path / "secret.txt").write_text("the other chat's")
    theirs = files.register(other.memory_dir, other.chat, tmp_path / "secret.txt")
    tool = SendFileTool(WorkspacePaths(tmp_path / "workspace", restrict=True), upload_limits(), files)
    assert "Sent outbox/telegram/5/summary-20261128.csv" in await tool.run({"file_ids": [record.id]}, ctx)
    assert [Path(f.path) for f in sent[0].files] == [made.resolve()]
    with pytest.raises(ToolError, match="no such file"):
        await tool.run({"file_ids": [theirs.id]}, ctx)
