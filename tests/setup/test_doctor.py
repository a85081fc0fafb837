"""`relaybot doctor` against the fake model server and the fake Telegram, Discord and Slack APIs."""

import asyncio
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli.main import app
from bot.setup.doctor import check_python, check_sandbox
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import Error, FakeLLM
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.support.cli_process import env_for


def write(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text)
    for folder in ("workspace", "state"):
        (home / folder).mkdir(mode=0o700, exist_ok=True)


async def doctor(home: Path, *args: str) -> tuple[int, str]:
    result = await asyncio.to_thread(CliRunner().invoke, app, ["doctor", *args], env=env_for(home))
    return result.exit_code, result.output


def line(output: str, name: str) -> str:
    return next(row for row in output.splitlines() if row[2:].startswith(name + ":"))


async def test_a_healthy_setup_passes_every_check(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    fake_llm.context_length = 32_768
    async with FakeDiscord() as discord, FakeSlack() as slack:
        write(
            tmp_path,
            f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
            f"channels:\n"
            f"  telegram: {{enabled: true, token: '{telegram.token}', api_base: '{telegram.base_url}'}}\n"
            f"  discord: {{enabled: true, token: {discord.token}, api_base: '{discord.api_base}'}}\n"
            f"  slack: {{enabled: true, bot_token: {slack.bot_token}, app_token: {slack.app_token},"
            f" api_base: '{slack.base_url}'}}\n",
        )
        code, output = await doctor(tmp_path)
        _, as_json = await doctor(tmp_path, "--json")
    assert code == 0, output
    for name in ("config", "workspace", "state", "model", "telegram token", "discord token"):
        assert line(output, name).startswith("✓"), output
    assert line(output, "slack bot token").startswith("✓") and line(output, "slack app token").startswith("✓")
    assert "@relay_bot" in line(output, "telegram token")
    assert line(output, "telegram privacy mode").startswith("✓ telegram privacy mode: on: in groups the bot sees only")
    assert "/setprivacy" in line(output, "telegram privacy mode")
    assert line(output, "context window").startswith("✓ context window: 32,768 tokens")
    assert line(output, "gateway") == "✓ gateway: not running (start it with `relaybot run`)"
    checks = json.loads(as_json)
    assert {c["name"] for c in checks} >= {"config", "model", "disk", "exec sandbox", "gateway"}
    assert all(set(c) == {"name", "status", "detail", "fix"} for c in checks)


async def test_each_problem_is_one_line_with_its_fix_and_exit_1(tmp_path: Path, telegram: FakeTelegram) -> None:
    async with FakeSlack() as slack:
        write(
            tmp_path,
            "llm:\n  model: openai/fake-model\n  api_base: http://127.0.0.1:9/v1\n"
            f"channels:\n"
            f"  telegram: {{enabled: true, token: '1:WRONG', api_base: '{telegram.base_url}'}}\n"
            f"  slack: {{enabled: true, bot_token: {slack.bot_token}, app_token: '', api_base: '{slack.base_url}'}}\n",
        )
        code, output = await doctor(tmp_path)
    assert code == 1
    assert line(output, "model").startswith("✗ model: cannot reach http://127.0.0.1:9/v1/models")
    assert line(output, "telegram token").startswith("✗ telegram token: rejected by 127.0.0.1")
    assert "→ put a valid token in channels.telegram.token" in line(output, "telegram token")
    assert line(output, "slack app token") == (
        "✗ slack app token: channels.slack.app_token is empty → set channels.slack.app_token, or disable the channel"
    )
    assert "WRONG" not in output


async def test_a_window_too_small_for_the_history_is_a_warning_naming_the_key(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    from bot.setup.home import InitReport, init_workspace

    write(tmp_path, f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n  context_window: 6000\n")
    init_workspace(tmp_path / "workspace", InitReport())
    code, output = await doctor(tmp_path)
    assert code == 0
    assert line(output, "context window").startswith("⚠ context window: 6,000 tokens")
    assert "set llm.context_window" in line(output, "context window")


async def test_a_window_too_small_for_the_prompt_and_tools_fails_naming_the_key_and_sizes(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    write(tmp_path, f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n  context_window: 1500\n")
    code, output = await doctor(tmp_path)
    assert code == 1
    row = line(output, "context window")
    assert row.startswith("✗ context window: 1,500 tokens, but the system prompt and tools alone take about ")
    assert "every message would fail" in row and "set llm.context_window" in row


@pytest.mark.parametrize("status", [404, 405, 501])
async def test_a_server_without_a_model_list_is_asked_for_a_chat_answer_and_its_window_is_unknown(
    tmp_path: Path, fake_llm: FakeLLM, status: int
) -> None:
    fake_llm.models_status = status
    write(tmp_path, f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n")
    code, output = await doctor(tmp_path)
    assert code == 0, output
    assert line(output, "model").startswith(f"✓ model: openai/fake-model at {fake_llm.base_url} answers"), output
    assert [r["max_tokens"] for r in fake_llm.requests] == [1]
    window = line(output, "context window")
    assert window.startswith("⚠ context window: unknown (neither the server nor litellm says it), 8,192 assumed")
    assert window.endswith("→ set llm.context_window to the model's real window")


async def test_a_model_the_list_does_not_name_is_asked_for_a_chat_answer(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write(tmp_path, f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n")
    assert (await doctor(tmp_path))[0] == 0
    assert fake_llm.requests == []  # listed as fake-model: the list is enough
    write(tmp_path, f"llm:\n  model: openai/llama3\n  api_base: {fake_llm.base_url}\n")
    code, output = await doctor(tmp_path)
    assert code == 0 and line(output, "model").startswith("✓ model: openai/llama3 at "), output
    assert [r["max_tokens"] for r in fake_llm.requests] == [1]


async def test_a_server_without_a_model_list_that_refuses_the_chat_fails(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.models_status = 404
    fake_llm.script(Error(404))
    write(tmp_path, f"llm:\n  model: openai/no-such-model\n  api_base: {fake_llm.base_url}\n")
    code, output = await doctor(tmp_path)
    assert code == 1
    assert line(output, "model").startswith("✗ model: openai/no-such-model did not answer"), output


def test_a_broken_config_is_the_only_line(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("llm:\n  modl: x\n")
    result = CliRunner().invoke(app, ["doctor"], env=env_for(tmp_path))
    assert result.exit_code == 1
    assert result.output.startswith("✗ config: llm.modl: unknown key")


def test_a_missing_sandbox_fails_with_the_fix_and_one_switched_off_is_a_warning(tmp_path: Path) -> None:
    from bot.config.schema import Config

    config = Config.model_validate({"workspace": tmp_path, "state_dir": tmp_path})
    check = check_sandbox(config, lambda _: (False, "NOT sandboxed (bwrap is not installed)"))
    assert check.status == "fail" and "waits for an owner's /approve" in check.detail
    assert "bubblewrap" in check.fix and "tools.exec.sandbox: off" in check.fix
    assert check_sandbox(config, lambda _: (True, "bubblewrap")).status == "ok"
    switched_off = Config.model_validate(
        {"workspace": tmp_path, "state_dir": tmp_path, "tools": {"exec": {"sandbox": "off"}}}
    )
    assert check_sandbox(switched_off, lambda _: (False, "NOT sandboxed (tools.exec.sandbox is off)")).status == "warn"


async def test_each_mcp_server_is_listed_with_its_tool_count_or_why_it_failed(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    repo = Path(__file__).resolve().parents[2]
    write(
        tmp_path,
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        "mcp_servers:\n"
        f"  calc:\n    command: {sys.executable}\n    args: [-m, tests.fakes.mcp_server]\n    cwd: {repo}\n"
        f"  gone:\n    command: {tmp_path / 'missing'}\n"
        "  remote:\n    url: http://127.0.0.1:9/mcp\n",
    )
    code, output = await doctor(tmp_path)
    _, as_json = await doctor(tmp_path, "--json")
    assert code == 0, output
    assert line(output, "mcp calc").startswith("✓ mcp calc: ") and line(output, "mcp calc").endswith(": 8 tools")
    assert line(output, "mcp gone") == (
        f"⚠ mcp gone: {tmp_path / 'missing'}: cannot start (FileNotFoundError(2, 'No such file or directory'))"
        " → check mcp_servers.gone.command, args and cwd"
    )
    assert line(output, "mcp remote").startswith("⚠ mcp remote: http://127.0.0.1:9/mcp: cannot start (")
    assert line(output, "mcp remote").endswith("→ check mcp_servers.remote.url and that the server is running")
    checks = {check["name"]: check for check in json.loads(as_json)}
    assert checks["mcp calc"]["status"] == "ok" and checks["mcp calc"]["detail"].endswith(": 8 tools")
    assert checks["mcp gone"]["status"] == "warn" and checks["mcp remote"]["status"] == "warn"


async def test_the_model_server_named_by_openai_base_url_is_the_one_checked(tmp_path: Path) -> None:
    write(tmp_path, "llm:\n  model: openai/fake-model\n")
    result = await asyncio.to_thread(
        CliRunner().invoke, app, ["doctor"], env={**env_for(tmp_path), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    assert line(result.output, "model").startswith("✗ model: cannot reach http://127.0.0.1:9/v1/models")


async def test_doctor_says_when_telegram_privacy_mode_is_off(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    telegram.privacy_mode = False
    write(
        tmp_path,
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        f"channels:\n  telegram: {{enabled: true, token: '{telegram.token}', api_base: '{telegram.base_url}'}}\n",
    )
    _, output = await doctor(tmp_path)
    assert line(output, "telegram privacy mode") == (
        "✓ telegram privacy mode: off: the bot reads every group message (for group context)"
    )


def test_run_python_without_bubblewrap_is_a_warning_that_it_is_not_offered(tmp_path: Path) -> None:
    from bot.config.schema import Config

    config = Config.model_validate({"workspace": tmp_path / "w", "state_dir": tmp_path / "s"})
    missing = check_python(
        config, lambda: "bwrap is not installed (Debian package bubblewrap), so run_python is not offered"
    )
    assert missing.status == "warn" and "run_python is not offered" in missing.detail
    assert check_python(config, lambda: None).status == "ok"


async def test_each_agent_has_its_own_checks_and_only_the_one_whose_model_is_down_fails(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with FakeLLM() as down:
        dead_base = down.base_url
    write(
        tmp_path,
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        "agents:\n"
        f"  - name: work\n    llm: {{model: openai/work-model, api_base: '{dead_base}'}}\n"
        f"  - name: home\n    llm: {{model: openai/fake-model, api_base: '{fake_llm.base_url}'}}\n",
    )
    code, output = await doctor(tmp_path)
    assert code == 1, output
    assert line(output, "model").startswith("✓")
    assert line(output, "agent work: model").startswith("✗"), output
    assert line(output, "agent home: model").startswith("✓"), output
    assert line(output, "agent home: workspace").startswith("✓") and "first message" in line(
        output, "agent home: workspace"
    )


async def test_a_server_wanting_a_key_is_told_apart_from_one_refusing_the_key_sent(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.required_key = "sk-right"
    write(tmp_path, f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n")
    code, output = await doctor(tmp_path)
    assert code == 1
    assert line(output, "model").startswith(f"✗ model: {fake_llm.base_url}/models wants a key; none was sent (401)")
    assert "refused" not in line(output, "model") and "→ the server wants a key: set llm.api_key" in output
    write(tmp_path, f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n  api_key: sk-wrong\n")
    code, output = await doctor(tmp_path)
    assert line(output, "model").startswith(f"✗ model: {fake_llm.base_url}/models refused the key (401)")


async def test_the_embeddings_server_is_checked_when_one_is_configured(tmp_path: Path, fake_llm: FakeLLM) -> None:
    base = f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
    write(tmp_path, base)
    _, output = await doctor(tmp_path)
    assert "embeddings:" not in output
    embeddings = f"memory:\n  embeddings: {{model: openai/fake-embed, api_base: '{fake_llm.base_url}'}}\n"
    write(tmp_path, base + embeddings)
    code, output = await doctor(tmp_path)
    assert code == 0, output
    assert line(output, "embeddings").startswith(f"✓ embeddings: openai/fake-embed at {fake_llm.base_url} answers (")
    assert fake_llm.embedding_requests[-1]["input"] == ["ping"]
    fake_llm.embedding_failure = Error(503)
    code, output = await doctor(tmp_path)
    assert code == 1
    assert line(output, "embeddings").startswith(f"✗ embeddings: openai/fake-embed at {fake_llm.base_url} did not")
    assert "→ check memory.embeddings (model, api_base, api_key)" in line(output, "embeddings")
