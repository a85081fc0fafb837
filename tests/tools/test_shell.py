import asyncio
import os
import select
import time
from pathlib import Path

import pytest

from bot.bus import Trust
from bot.errors import ToolError
from bot.tools.base import ToolContext
from bot.tools.sandbox.exec_sandbox import BwrapSandbox, HostShell, Launcher, scrubbed_env
from bot.tools.shell import CappedOutput, ExecTool, deny_reason
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness

CONFIG_SECRET = "sk-config-secret-value"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture(params=["host", "bwrap"])
def launcher(request: pytest.FixtureRequest, workspace: Path) -> Launcher:
    """Each process test runs on the bare host and in the bubblewrap sandbox."""
    if request.param == "bwrap":
        return BwrapSandbox(workspace, request.getfixturevalue("bwrap"))
    return host_shell(workspace)


def host_shell(workspace: Path, **env: str) -> HostShell:
    return HostShell({"PATH": os.environ["PATH"], "HOME": str(workspace.parent), **env}, (CONFIG_SECRET,))


def exec_tool(workspace: Path, launcher: Launcher | None = None, timeout: float = 10) -> ExecTool:
    return ExecTool(workspace, timeout, [CONFIG_SECRET, ""], launcher or host_shell(workspace))


def host_pids(marker: str) -> list[int]:
    """Live processes on the host whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def wait_until_gone(pid: int, within: float = 10.0) -> bool:
    """True once process `pid` has ended (a pidfd becomes readable at exit; no polling)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = await asyncio.to_thread(select.select, [fd], [], [], within)
        return bool(ready)
    finally:
        os.close(fd)


async def test_runs_in_the_workspace_and_reports_output_and_exit_code(
    workspace: Path, launcher: Launcher, ctx: ToolContext
) -> None:
    result = await exec_tool(workspace, launcher).run({"command": "pwd; echo oops >&2; exit 3"}, ctx)
    assert result == f"{workspace}\noops\n[exit code 3]"


async def test_no_output_says_so(workspace: Path, launcher: Launcher, ctx: ToolContext) -> None:
    assert await exec_tool(workspace, launcher).run({"command": "true"}, ctx) == "(no output)\n[exit code 0]"


async def test_timeout_kills_the_whole_process_tree(workspace: Path, launcher: Launcher, ctx: ToolContext) -> None:
    marker = f"30.{os.getpid()}{time.monotonic_ns() % 100000}"  # a sleep only this test starts
    command = f"sh -c 'sleep {marker} & sleep {marker}'"
    started = time.monotonic()
    result = await exec_tool(workspace, launcher, timeout=1).run({"command": command}, ctx)
    assert time.monotonic() - started < 10
    assert result.endswith("[killed after 1 s: the command did not finish in time]")
    for pid in host_pids(f"sleep\0{marker}"):
        assert await wait_until_gone(pid)


async def test_cancelled_call_kills_the_process_tree(workspace: Path, launcher: Launcher, ctx: ToolContext) -> None:
    workspace.mkdir()
    os.mkfifo(workspace / "started.fifo")
    marker = f"marker-{os.getpid()}-{time.monotonic_ns()}"
    child = "import time; open('started.fifo', 'w').write('up'); time.sleep(30)"
    command = f'python3 -c "{child}" {marker} & wait'
    call = asyncio.create_task(exec_tool(workspace, launcher).run({"command": command}, ctx))
    await asyncio.to_thread((workspace / "started.fifo").read_text)
    children = host_pids(marker)
    assert children
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    for pid in children:
        assert await wait_until_gone(pid)


async def test_long_output_keeps_head_and_tail_and_notes_the_size(
    workspace: Path, launcher: Launcher, ctx: ToolContext
) -> None:
    result = await exec_tool(workspace, launcher).run({"command": "seq 1 100000"}, ctx)
    assert result.startswith("1\n2\n3\n")
    assert result.endswith("99999\n100000\n[exit code 0]")
    assert "bytes omitted: 588,895 in total, showing the first and last 8,000" in result
    assert len(result) < 20_000


def test_capped_output_keeps_everything_that_fits_and_notes_the_rest() -> None:
    output = CappedOutput(keep=4)
    for chunk in (b"ab", b"cdef", b"gh"):
        output.add(chunk)
    assert output.text() == "abcdefgh"
    output.add(b"ij")
    assert output.text() == "abcd\n[... 2 bytes omitted: 10 in total, showing the first and last 4 ...]\nghij"


async def test_child_environment_holds_no_secret(workspace: Path, ctx: ToolContext) -> None:
    secrets = {
        "GITHUB_TOKEN": "ghp-token-1",
        "STRIPE_KEY": "stripe-key-2",
        "APP_SECRET": "app-secret-3",
        "DB_PASSWORD": "db-password-4",
        "OPENAI_API_KEY_FILE": "api-key-5",
        "INNOCENT_LOOKING": f"prefix-{CONFIG_SECRET}",
    }
    tool = exec_tool(workspace, host_shell(workspace, GREETING="hello", **secrets))
    result = await tool.run({"command": "env"}, ctx)
    assert "GREETING=hello" in result
    for name, value in secrets.items():
        assert name not in result and value not in result


def test_scrubbing_keeps_ordinary_variables() -> None:
    env = scrubbed_env({"PATH": "/bin", "LANG": "C", "KEYBOARD": "us", "MY_TOKEN": "x"}, ["sk-1"])
    assert env == {"PATH": "/bin", "LANG": "C", "KEYBOARD": "us"}


async def test_secret_values_in_output_are_redacted(workspace: Path, ctx: ToolContext) -> None:
    workspace.mkdir()
    (workspace / "leak.txt").write_text(f"key={CONFIG_SECRET}\n")
    assert await exec_tool(workspace).run({"command": "cat leak.txt"}, ctx) == "key=[redacted]\n[exit code 0]"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "rm -rf ~",
        "sudo rm -fr /*",
        "rm -r --no-preserve-root /",
        'cd /tmp && rm -Rf "$HOME"',
        "mkfs.ext4 /dev/sda1",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "echo boom > /dev/nvme0n1",
        "shutdown -h now",
        "sudo reboot",
        "systemctl poweroff",
        ":(){ :|:& };:",
    ],
)
async def test_obvious_destroyers_are_refused(workspace: Path, ctx: ToolContext, command: str) -> None:
    with pytest.raises(ToolError, match="refused: it .*deny list blocks this command"):
        await exec_tool(workspace).run({"command": command}, ctx)


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build/",
        "rm -rf ./tmp ~/old-cache",
        "grep shutdown log.txt",
        "echo reboot",
        "ls /",
        "dd if=x of=/dev/null",
    ],
)
def test_ordinary_commands_pass_the_deny_list(command: str) -> None:
    assert deny_reason(command) is None


async def test_owner_runs_exec_through_the_agent_loop_without_leaking_secrets(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:telegram-token")
    monkeypatch.setenv("COPY_OF_LLM_KEY", "sk-test")
    fake_llm.script(ToolCalls((("exec", {"command": "echo hi; env"}),)), Text("ran it"))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("run env") == "ran it"
    result = [m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"][0]
    assert result.startswith("hi\n") and result.endswith("[exit code 0]")
    assert "sk-test" not in result and "telegram-token" not in result and "COPY_OF_LLM_KEY" not in result


async def test_guest_is_not_shown_exec_and_is_refused_when_calling_it(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("exec", {"command": "touch pwned"}),)), Text("no luck"))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("hi", chat="telegram:5", sender="5", trust=Trust.GUEST) == "no luck"
        assert not (bot.config.workspace / "pwned").exists()
    shown = {tool["function"]["name"] for tool in fake_llm.requests[0].get("tools", [])}
    assert "exec" not in shown and "write_file" not in shown
    result = [m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"][0]
    assert result == "Error: the exec tool is not available to this sender (role guest)."


async def test_exec_can_be_switched_off(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm, tools={"exec": {"enabled": False}}) as bot:
        assert "exec" not in bot.app.registry.names()
        assert "read_file" in bot.app.registry.names()
