import os
from pathlib import Path

import pytest

from bot.errors import ToolError
from bot.tools.base import ToolContext
from bot.tools.files import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from bot.tools.workspace import WorkspacePaths
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness

PNG_HEADER = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def paths(workspace: Path) -> WorkspacePaths:
    return WorkspacePaths(workspace, restrict=True)


async def read(paths: WorkspacePaths, ctx: ToolContext, path: str, **args: int) -> str:
    return await ReadFileTool(paths).run({"path": path, **args}, ctx)


async def test_read_returns_the_text(workspace: Path, paths: WorkspacePaths, ctx: ToolContext) -> None:
    (workspace / "notes.txt").write_text("first\nsecond\n")
    assert await read(paths, ctx, "notes.txt") == "first\nsecond\n"


async def test_long_file_is_read_in_pages_with_a_note_of_what_remains(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext
) -> None:
    (workspace / "log.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    first = await read(paths, ctx, "log.txt", limit=4)
    assert first.startswith("line 1\nline 2\nline 3\nline 4\n")
    assert "[6 more lines in log.txt; read_file with offset=5 to continue]" in first
    last = await read(paths, ctx, "log.txt", offset=9, limit=4)
    assert last == "line 9\nline 10\n"
    with pytest.raises(ToolError, match="has 10 lines; offset 11 is past the end"):
        await read(paths, ctx, "log.txt", offset=11)


async def test_binary_file_is_refused_with_its_size_and_type(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext
) -> None:
    (workspace / "photo.png").write_bytes(PNG_HEADER + bytes(2048))
    with pytest.raises(ToolError, match=r"photo.png is a binary file \(image/png, 2.0 KB\)"):
        await read(paths, ctx, "photo.png")


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "../ws-evil/secret.txt", "sub/../../outside.txt"])
async def test_paths_leading_out_of_the_workspace_are_refused(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext, path: str
) -> None:
    (workspace.parent / "ws-evil").mkdir()
    (workspace.parent / "ws-evil" / "secret.txt").write_text("secret")
    (workspace.parent / "outside.txt").write_text("secret")
    with pytest.raises(ToolError, match="outside the workspace"):
        await read(paths, ctx, path)


async def test_symlink_out_of_the_workspace_is_refused_for_every_file_tool(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext
) -> None:
    outside = workspace.parent / "private"
    outside.mkdir()
    (outside / "key.txt").write_text("secret")
    (workspace / "link").symlink_to(outside)
    calls = [
        (ReadFileTool, {"path": "link/key.txt"}),
        (WriteFileTool, {"path": "link/key.txt", "content": "pwned"}),
        (EditFileTool, {"path": "link/key.txt", "old_text": "secret", "new_text": "pwned"}),
        (ListDirTool, {"path": "link"}),
    ]
    for tool, args in calls:
        with pytest.raises(ToolError, match="outside the workspace"):
            await tool(paths).run(args, ctx)
    assert (outside / "key.txt").read_text() == "secret"


async def test_symlink_inside_the_workspace_and_absolute_paths_inside_it_work(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext
) -> None:
    (workspace / "real.txt").write_text("hello")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    assert await read(paths, ctx, "alias.txt") == "hello"
    assert await read(paths, ctx, str(workspace / "real.txt")) == "hello"


async def test_without_restriction_files_outside_are_reachable(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "outside.txt").write_text("out here")
    paths = WorkspacePaths(tmp_path / "ws", restrict=False)
    assert await read(paths, ctx, "../outside.txt") == "out here"


async def test_write_creates_folders_and_leaves_no_temporary_file(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext
) -> None:
    result = await WriteFileTool(paths).run({"path": "a/b/c.md", "content": "héllo"}, ctx)
    assert result == "Wrote 6 bytes to a/b/c.md."
    assert (workspace / "a" / "b" / "c.md").read_text() == "héllo"
    assert os.listdir(workspace / "a" / "b") == ["c.md"]


async def test_write_replaces_a_file_keeping_its_mode(workspace: Path, paths: WorkspacePaths, ctx: ToolContext) -> None:
    script = workspace / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    await WriteFileTool(paths).run({"path": "run.sh", "content": "new"}, ctx)
    assert script.read_text() == "new"
    assert script.stat().st_mode & 0o777 == 0o755


async def test_failed_write_leaves_the_old_file_whole(workspace: Path, paths: WorkspacePaths, ctx: ToolContext) -> None:
    (workspace / "keep.txt").write_text("original")
    # A lone surrogate (valid in JSON) fails to encode halfway through the write.
    with pytest.raises(ToolError, match="not valid Unicode .*; nothing was written"):
        await WriteFileTool(paths).run({"path": "keep.txt", "content": "a" * 10000 + "\ud800"}, ctx)
    assert (workspace / "keep.txt").read_text() == "original"
    assert os.listdir(workspace) == ["keep.txt"]


async def test_edit_replaces_a_unique_match(workspace: Path, paths: WorkspacePaths, ctx: ToolContext) -> None:
    (workspace / "todo.md").write_text("- buy milk\n- call mum\n")
    args = {"path": "todo.md", "old_text": "buy milk", "new_text": "buy oat milk"}
    assert await EditFileTool(paths).run(args, ctx) == "Edited todo.md."
    assert (workspace / "todo.md").read_text() == "- buy oat milk\n- call mum\n"


@pytest.mark.parametrize(("old_text", "expected"), [("walk dog", "was not found"), ("milk", "occurs 2 times")])
async def test_edit_without_exactly_one_match_changes_nothing(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext, old_text: str, expected: str
) -> None:
    original = b"- buy milk\r\n- drink milk\r\n"
    (workspace / "todo.md").write_bytes(original)
    with pytest.raises(ToolError, match=f"{expected}.*nothing was changed"):
        await EditFileTool(paths).run({"path": "todo.md", "old_text": old_text, "new_text": "x"}, ctx)
    assert (workspace / "todo.md").read_bytes() == original


async def test_edit_keeps_line_endings_it_does_not_touch(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext
) -> None:
    (workspace / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    await EditFileTool(paths).run({"path": "win.txt", "old_text": "two", "new_text": "2"}, ctx)
    assert (workspace / "win.txt").read_bytes() == b"one\r\n2\r\n"


async def test_list_dir_shows_folders_first_and_file_sizes(
    workspace: Path, paths: WorkspacePaths, ctx: ToolContext
) -> None:
    (workspace / "b.txt").write_text("12345")
    (workspace / "a").mkdir()
    (workspace / "c.bin").write_bytes(bytes(3000))
    assert await ListDirTool(paths).run({}, ctx) == "a/\nb.txt  (5 bytes)\nc.bin  (2.9 KB)"
    with pytest.raises(ToolError, match="does not exist"):
        await ListDirTool(paths).run({"path": "nope"}, ctx)


async def test_model_writes_then_reads_a_file_through_the_agent_loop(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(
        ToolCalls((("write_file", {"path": "notes/plan.md", "content": "step 1\n"}),)),
        ToolCalls((("read_file", {"path": "notes/plan.md"}), ("read_file", {"path": "../../etc/passwd"}))),
        Text("done"),
    )
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("make a plan") == "done"
        assert (bot.config.workspace / "notes" / "plan.md").read_text() == "step 1\n"
    results = [m["content"] for m in fake_llm.requests[2]["messages"] if m["role"] == "tool"]
    assert results[0] == "Wrote 7 bytes to notes/plan.md."
    assert results[1] == "step 1\n"
    assert results[2].startswith("Error: '../../etc/passwd' is outside the workspace")
