import asyncio
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from bot.cli.main import app
from bot.tools.sandbox.exec_sandbox import bwrap_problem
from tests.fakes.openai_server import Error, FakeLLM
from tests.files.samples import docx_file
from tests.support.cli_process import env_for, run_cli, write_config
from tests.support.document_reader import read_the_attached_document

HEAVY = (
    "litellm",
    "telegram",
    "discord",
    "slack_bolt",
    "slack_sdk",
    "apscheduler",
    "microsoft_agents",
    "jwt",
    "tokenizers",
)


def test_help_loads_no_heavy_module() -> None:
    code = (
        "import sys\nsys.argv = ['relaybot', '--help']\nfrom bot.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY', sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "relaybot init" not in result.stderr
    assert "chat" in result.stdout
    assert result.stdout.strip().endswith("HEAVY []")


def test_help_names_every_chat_platform() -> None:
    from channels.platforms import KINDS

    tagline = CliRunner().invoke(app, ["--help"]).output.split("\n\n")[1].lower()
    assert [name for name in KINDS if name not in tagline] == []
    assert "web chat" in tagline and "terminal" in tagline


def test_init_creates_config_0600_and_workspace_and_is_idempotent(tmp_path: Path) -> None:
    runner = CliRunner()
    env = env_for(tmp_path)
    first = runner.invoke(app, ["init"], env=env)
    assert first.exit_code == 0, first.output
    config = tmp_path / "config.yaml"
    assert config.stat().st_mode & 0o777 == 0o600
    for name in (
        "AGENTS.md",
        "SOUL.md",
        "USER.md",
        "TOOLS.md",
        "HEARTBEAT.md",
        "memory/MEMORY.md",
        "memory/HISTORY.md",
    ):
        assert (tmp_path / "workspace" / name).stat().st_size > 0, name
    assert "relaybot chat" in first.output
    (tmp_path / "workspace" / "SOUL.md").write_text("my own soul")
    config.write_text(config.read_text() + "\n# edited\n")
    second = runner.invoke(app, ["init"], env=env)
    assert second.exit_code == 0
    assert "created" not in second.output
    assert (tmp_path / "workspace" / "SOUL.md").read_text() == "my own soul"
    assert config.read_text().endswith("# edited\n")


def test_config_error_exits_2_with_one_line_naming_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent:\n  queue_mod: collect\n")
    result = CliRunner().invoke(app, ["--config", str(bad), "status"], env=env_for(tmp_path))
    assert result.exit_code == 2
    assert result.output.strip() == "config error: agent.queue_mod: unknown key; did you mean 'queue_mode'?"


def test_relaybot_config_variable_selects_the_file(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.yaml"
    path.write_text("llm:\n  model: openai/from-env-var\n")
    env = {**env_for(tmp_path), "RELAYBOT_CONFIG": str(path)}
    result = CliRunner().invoke(app, ["status"], env=env)
    assert result.exit_code == 0 and "openai/from-env-var" in result.output


def test_help_for_the_config_option_names_both_variables() -> None:
    result = CliRunner().invoke(app, ["--help"], terminal_width=200)
    [line] = [line for line in result.output.splitlines() if "--config" in line]
    assert "$RELAYBOT_CONFIG" in line and "$RELAYBOT_HOME" in line


async def test_chat_message_answers_once_end_to_end(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write_config(tmp_path, fake_llm)
    code, out, err = await run_cli(tmp_path, "chat", "-m", "hello from the cli")
    assert code == 0, err
    assert out.strip().endswith("hello from the cli") and out.startswith("echo: ")
    assert fake_llm.requests[0]["stream"] is True
    assert list((tmp_path / "state" / "sessions").glob("console*.jsonl"))


async def test_agent_in_the_terminal_names_the_gateways_other_agents(tmp_path: Path, fake_llm: FakeLLM) -> None:
    config = write_config(tmp_path, fake_llm)
    with config.open("a") as file:
        file.write("agents:\n  - name: work\n  - name: family\n")
    code, out, err = await run_cli(tmp_path, "chat", "-m", "/agent")
    assert code == 0, err
    assert "Agent main answers here: this chat always talks to it" in out
    assert "the gateway's other agents (work, family)" in out and "only agent" not in out


async def test_a_file_sent_with_file_in_the_terminal_chat_is_read_by_read_document(tmp_path: Path) -> None:
    plan = docx_file(tmp_path / "garden plan.docx", "Garden plan", ["Plant tomatoes in May."])
    async with FakeLLM(default=read_the_attached_document) as fake:
        write_config(tmp_path / "home", fake)
        code, out, err = await run_cli(tmp_path / "home", "chat", "-m", f"/file '{plan}' what is in it?")
        missing = await run_cli(tmp_path / "home", "chat", "-m", "/file /no/such.pdf")
    assert code == 0, err
    assert out.startswith("Read: ") and "Plant tomatoes in May." in out
    asked = fake.requests[0]["messages"][-1]["content"]
    assert "\nwhat is in it?\n[attached file: f_" in asked and " garden plan.docx (" in asked
    [tool] = [m for m in fake.requests[1]["messages"] if m["role"] == "assistant"][-1]["tool_calls"]
    assert tool["function"]["name"] == "read_document"
    inbox = tmp_path / "home" / "workspace" / "inbox" / "console" / "local"
    [kept] = list(inbox.iterdir())  # moved in from the staging folder
    assert kept.name.endswith("-garden plan.docx") and kept.read_bytes() == plan.read_bytes()
    assert missing[0] == 0 and "Could not send /no/such.pdf" in missing[1] and len(fake.requests) == 2


async def test_chat_message_with_refused_key_exits_nonzero(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write_config(tmp_path, fake_llm)
    fake_llm.script(Error(401))
    code, out, err = await run_cli(tmp_path, "chat", "-m", "hello")
    assert code == 1
    assert "API key was refused" in out
    assert "Traceback" not in out + err


async def test_run_without_channels_says_how_to_enable_one_and_stops_on_sigint(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    write_config(tmp_path, fake_llm)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "run",
        env=env_for(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    line = b""
    while b"No chat channel" not in line:  # after any start-up warnings (file modes fixed, exec not sandboxed)
        line = await asyncio.wait_for(process.stderr.readline(), 60)
        assert line, "stderr ended before the no-channel notice"
    assert b"No chat channel is enabled" in line and b"channels.telegram.enabled" in line
    process.send_signal(signal.SIGINT)
    _, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
    assert "INFO bot.app.serve: gateway stopped" in (tmp_path / "state" / "logs" / "relaybot.log").read_text()


def test_pairing_list_approve_and_revoke(tmp_path: Path) -> None:
    from bot.access.pairing import PairingBook

    config = tmp_path / "config.yaml"
    config.write_text("llm:\n  model: openai/x\n")
    code, _ = PairingBook(tmp_path / "state" / "pairing.json").request("telegram", "77", "Ann")
    runner, env = CliRunner(), env_for(tmp_path)
    listed = runner.invoke(app, ["pairing", "list"], env=env)
    assert code in listed.output and "user 77 (Ann)" in listed.output
    assert runner.invoke(app, ["pairing", "approve", "telegram", "WRONG234"], env=env).exit_code == 1
    approved = runner.invoke(app, ["pairing", "approve", "telegram", code], env=env)
    assert approved.exit_code == 0 and "77" in approved.output
    assert PairingBook(tmp_path / "state" / "pairing.json").is_approved("telegram", "77")
    assert runner.invoke(app, ["pairing", "revoke", "telegram", "77"], env=env).exit_code == 0
    assert not PairingBook(tmp_path / "state" / "pairing.json").is_approved("telegram", "77")


def test_pairing_approve_code_as_a_person_links_the_account_for_good(tmp_path: Path) -> None:
    from bot.access.pairing import PairingBook

    config = tmp_path / "config.yaml"
    config.write_text("llm:\n  model: openai/x\nidentities:\n  alice: [telegram:123]\n")
    book = PairingBook(tmp_path / "state" / "pairing.json")
    code, _ = book.request("discord", "456", "Al")
    runner, env = CliRunner(), env_for(tmp_path)
    unknown = runner.invoke(app, ["pairing", "approve", code, "--as", "carol"], env=env)
    assert unknown.exit_code == 1 and "No person 'carol' (people: alice)" in unknown.output
    approved = runner.invoke(app, ["pairing", "approve", code, "--as", "alice"], env=env)
    assert approved.exit_code == 0 and "Approved discord user 456 as alice." in approved.output
    assert book.people() == {"discord:456": "alice"} and book.is_approved("discord", "456")
    assert "discord:456 is alice" in runner.invoke(app, ["pairing", "list"], env=env).output


async def test_debug_logs_never_show_the_api_key(tmp_path: Path, fake_llm: FakeLLM) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "config.yaml").write_text(
        f"llm:\n  model: openai/fake-model\n  api_key: sk-very-secret-key-123\n  api_base: {fake_llm.base_url}\n"
    )
    code, out, err = await run_cli(tmp_path, "--log-level", "debug", "chat", "-m", "hello")
    assert code == 0, err
    assert "turn answered" in err
    assert "sk-very-secret-key-123" not in out + err


def test_status_says_whether_exec_is_sandboxed(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("llm:\n  model: openai/x\n")
    runner, env = CliRunner(), env_for(tmp_path)
    bare = runner.invoke(app, ["status"], env={**env, "PATH": str(tmp_path / "no-bin")})
    assert bare.exit_code == 0
    assert "exec:      NOT sandboxed (bwrap is not installed (Debian package bubblewrap))" in bare.output
    if shutil.which("bwrap") and bwrap_problem(shutil.which("bwrap") or "") is None:
        sandboxed = runner.invoke(app, ["status"], env=env)
        assert "exec:      sandboxed by bubblewrap" in sandboxed.output


def test_required_sandbox_that_cannot_run_stops_chat_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("llm:\n  model: openai/x\ntools:\n  exec:\n    sandbox: bwrap\n")
    env = {**env_for(tmp_path), "PATH": str(tmp_path / "no-bin")}
    result = CliRunner().invoke(app, ["chat", "-m", "hi"], env=env)
    assert result.exit_code == 2
    assert result.output.strip() == (
        "config error: tools.exec.sandbox: is bwrap, but bwrap is not installed (Debian package bubblewrap); "
        "install bubblewrap or use auto"
    )


def test_status_lists_each_mcp_server_with_its_tool_count(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    (tmp_path / "config.yaml").write_text(
        "mcp_servers:\n"
        f"  calc:\n    command: {sys.executable}\n    args: [-m, tests.fakes.mcp_server]\n    cwd: {repo}\n"
        f"  gone:\n    command: {tmp_path / 'missing'}\n"
    )
    result = CliRunner().invoke(app, ["status"], env=env_for(tmp_path))
    assert result.exit_code == 0
    assert "mcp calc: " in result.output and ": 8 tools" in result.output
    assert f"mcp gone: {tmp_path / 'missing'}: cannot start (FileNotFoundError" in result.output
