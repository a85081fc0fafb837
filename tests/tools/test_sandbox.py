import asyncio
import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from bot.app.agent_parts import build_registry
from bot.config.loader import load_config
from bot.config.schema import Config
from bot.errors import ConfigError
from bot.skills import SkillLibrary
from bot.tools.base import ToolContext
from bot.tools.sandbox.exec_sandbox import BwrapSandbox, HostShell, choose_launcher
from bot.tools.sandbox.launcher import exec_launcher
from bot.tools.shell import ExecTool
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness

CONFIG_SECRET = "sk-config-secret-4711"
ENV_SECRET = "cloud-secret-0815"
SESSION_SECRET = "my bank pin is 2468"
SSH_SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- id-rsa-1357"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A relaybot home in the default layout (workspace inside it), a user home, secrets in the environment."""
    home = tmp_path / "relaybot"
    (home / "state" / "sessions").mkdir(parents=True)
    (home / "workspace").mkdir()
    (home / "config.yaml").write_text(f"llm:\n  api_key: {CONFIG_SECRET}\n")
    (home / "state" / "sessions" / "telegram_1.jsonl").write_text(f'{{"content": "{SESSION_SECRET}"}}\n')
    (home / "state" / "pairing.json").write_text("{}")
    user_home = tmp_path / "user"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_rsa").write_text(SSH_SECRET)
    monkeypatch.setenv("RELAYBOT_HOME", str(home))
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("CLOUD_SECRET_ACCESS_KEY", ENV_SECRET)
    monkeypatch.setenv("INNOCENT", ENV_SECRET)
    return home


@pytest.fixture
def config(home: Path) -> Config:
    return load_config(home / "config.yaml")


def sandboxed(config: Config, bwrap: str) -> ExecTool:
    """exec as the app builds it, but without the output redaction, so only the sandbox stands in the way."""
    launcher = exec_launcher(config)
    assert isinstance(launcher, BwrapSandbox) and launcher.bwrap == bwrap
    return ExecTool(config.workspace, 10, [], launcher)


@pytest.mark.parametrize(
    "command",
    [
        "base64 ../config.yaml",
        "rev ../config.yaml",
        "od -c {home}/config.yaml",
        "cat {home}/config.yaml | base64",
        "xxd {home}/config.yaml || python3 -c 'print(open(\"{home}/config.yaml\").read()[::-1])'",
        "cat {home}/state/sessions/telegram_1.jsonl",
        "ls -la {home}/state",
        "cat {home}/state/pairing.json",
        "ls ../state",
        "cat {user}/.ssh/id_rsa | base64",
    ],
)
async def test_sandbox_hides_config_state_and_user_home(
    config: Config, home: Path, bwrap: str, ctx: ToolContext, command: str
) -> None:
    command = command.format(home=home, user=Path.home())
    result = await sandboxed(config, bwrap).run({"command": command}, ctx)
    assert "No such file or directory" in result
    for secret in (CONFIG_SECRET, SESSION_SECRET, SSH_SECRET, "api_key"):
        assert secret not in result and secret[::-1] not in result


@pytest.mark.parametrize(
    "command", ["cat /proc/1/environ", "cat /proc/$PPID/environ", "env", "cat /proc/*/environ | base64 -w0"]
)
async def test_sandbox_shows_no_process_environment_of_the_bot(
    config: Config, bwrap: str, ctx: ToolContext, command: str
) -> None:
    result = await sandboxed(config, bwrap).run({"command": command}, ctx)
    decoded = result
    if "base64" in command:
        import base64

        decoded = base64.b64decode(result.split("\n")[0]).decode(errors="replace")
    assert ENV_SECRET not in decoded and "CLOUD_SECRET_ACCESS_KEY" not in decoded and "RELAYBOT_HOME" not in decoded
    assert f"HOME={config.workspace}" in decoded


async def test_sandbox_sees_only_its_own_processes(config: Config, bwrap: str, ctx: ToolContext) -> None:
    result = await sandboxed(config, bwrap).run({"command": "ls /proc | grep -c '^[0-9]'"}, ctx)
    assert int(result.split("\n")[0]) <= 4  # bwrap as pid 1, the shell, ls, grep


async def test_ordinary_work_runs_in_the_sandbox(config: Config, bwrap: str, ctx: ToolContext) -> None:
    command = (
        "python3 -c 'print(6 * 7)' && echo note > note.txt && mkdir -p sub && cp note.txt sub/ && "
        "git init -q repo && cd repo && echo x > f && git add f && "
        "git -c user.name=bot -c user.email=bot@example.org commit -qm first && git log --format=%s && "
        "echo scratch > /tmp/scratch && cat /tmp/scratch && touch /usr/evil"
    )
    result = await sandboxed(config, bwrap).run({"command": command}, ctx)
    assert result.startswith("42\nfirst\nscratch\n")
    assert "Read-only file system" in result
    assert (config.workspace / "note.txt").read_text() == "note\n"
    assert (config.workspace / "sub" / "note.txt").exists() and (config.workspace / "repo" / ".git").is_dir()
    assert not Path("/tmp/scratch").exists() and not Path("/usr/evil").exists()


async def test_sandbox_holds_no_capabilities_even_for_root(config: Config, bwrap: str, ctx: ToolContext) -> None:
    command = "grep -E '^Cap(Prm|Eff)' /proc/self/status; mkdir -p sub && mount -t tmpfs none sub"
    result = await sandboxed(config, bwrap).run({"command": command}, ctx)
    assert result.startswith("CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n")
    assert not result.endswith("[exit code 0]")


def test_sandbox_runs_for_an_ordinary_user(bwrap: str) -> None:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv (util-linux) to act as an ordinary user")
    with tempfile.TemporaryDirectory() as shared:
        workspace = Path(shared)
        workspace.chmod(0o777)
        run_as_nobody(setpriv, bwrap, workspace)


def run_as_nobody(setpriv: str, bwrap: str, workspace: Path) -> None:
    launch = BwrapSandbox(workspace, bwrap).launch("id -u; echo made > note; ls /proc | grep -c '^[0-9]'")
    user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *launch.argv]
    done = subprocess.run(user, env=launch.env, capture_output=True, text=True, timeout=30, check=False)
    if "namespace" in done.stderr:
        pytest.skip(f"user namespaces are off for ordinary users here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    uid, processes = done.stdout.split("\n")[:2]
    assert uid == "65534" and int(processes) <= 4
    assert (workspace / "note").read_text() == "made\n"


async def test_paths_hidden_under_mounted_folders_are_covered(tmp_path: Path, bwrap: str, ctx: ToolContext) -> None:
    workspace = tmp_path / "ws"
    (workspace / "state").mkdir(parents=True)
    (workspace / "state" / "db").write_text("private")
    (workspace / "notes.md").write_text("public")
    sandbox = BwrapSandbox(workspace, bwrap, hidden=(workspace / "state", Path("/etc/hostname")))
    command = "cat notes.md; ls state | wc -l; wc -c < /etc/hostname"
    result = await ExecTool(workspace, 10, [], sandbox).run({"command": command}, ctx)
    assert result == "public0\n0\n[exit code 0]"


async def test_network_can_be_cut(tmp_path: Path, bwrap: str, ctx: ToolContext) -> None:
    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello from the host\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    command = f"python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', {port})).recv(99).decode())\""
    async with server:
        online = await ExecTool(tmp_path, 10, [], BwrapSandbox(tmp_path, bwrap)).run({"command": command}, ctx)
        offline = BwrapSandbox(tmp_path, bwrap, network=False)
        cut = await ExecTool(tmp_path, 10, [], offline).run({"command": command}, ctx)
    assert online.startswith("hello from the host")
    assert "[exit code 1]" in cut and "hello" not in cut


async def test_owner_env_entries_reach_the_sandbox(home: Path, bwrap: str, ctx: ToolContext) -> None:
    (home / "config.yaml").write_text("tools:\n  exec:\n    env:\n      GIT_AUTHOR_NAME: Ada\n")
    tool = sandboxed(load_config(home / "config.yaml"), bwrap)
    result = await tool.run({"command": "env | sort"}, ctx)
    lines = set(result.split("\n"))
    assert {"GIT_AUTHOR_NAME=Ada", "LANG=C.UTF-8", "TERM=dumb"} <= lines
    assert f"HOME={home / 'workspace'}" in lines
    assert not any(line.startswith(("CLOUD_", "INNOCENT", "RELAYBOT")) for line in lines)


def test_off_runs_on_the_host_with_the_guard_rail(tmp_path: Path) -> None:
    host = HostShell({"PATH": "/bin", "GITHUB_TOKEN": "x"}, ())
    launcher = choose_launcher("off", BwrapSandbox(tmp_path), host)
    assert launcher is host
    assert launcher.launch("ls").env == {"PATH": "/bin"}


def test_auto_without_bwrap_falls_back_and_says_why(tmp_path: Path) -> None:
    launcher = choose_launcher("auto", BwrapSandbox(tmp_path), HostShell({}, ()), which=lambda name: None)
    assert isinstance(launcher, HostShell)
    assert launcher.description.startswith("NOT sandboxed (bwrap is not installed (Debian package bubblewrap))")


def test_auto_with_a_bwrap_that_cannot_run_falls_back(tmp_path: Path) -> None:
    launcher = choose_launcher("auto", BwrapSandbox(tmp_path), HostShell({}, ()), which=lambda name: "/bin/false")
    assert isinstance(launcher, HostShell)
    assert "/bin/false cannot create a sandbox here: exit code 1" in launcher.description


def test_required_bwrap_that_is_missing_stops_the_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^tools\.exec\.sandbox: is bwrap, but bwrap is not installed"):
        choose_launcher("bwrap", BwrapSandbox(tmp_path), HostShell({}, ()), which=lambda name: None)


def test_one_warning_at_start_when_exec_is_not_sandboxed(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with caplog.at_level(logging.WARNING):
        build_registry(config, SkillLibrary([]))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "exec is NOT sandboxed (bwrap is not installed (Debian package bubblewrap)): commands run with the "
        "bot's user rights; only the guard rail applies"
    ]


async def test_owner_exec_through_the_agent_loop_cannot_read_the_state(
    tmp_path: Path, fake_llm: FakeLLM, bwrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUD_SECRET_ACCESS_KEY", ENV_SECRET)
    command = "base64 ../state/sessions/*; cat /proc/$PPID/environ | rev"
    fake_llm.script(Text("I will remember that"), ToolCalls((("exec", {"command": command}),)), Text("done"))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask(f"note: {SESSION_SECRET}") == "I will remember that"
        assert await bot.ask("now leak it") == "done"
    result = [m["content"] for m in fake_llm.requests[2]["messages"] if m["role"] == "tool"][0]
    assert "No such file or directory" in result
    assert ENV_SECRET[::-1] not in result and "YEK_SSECCA" not in result
