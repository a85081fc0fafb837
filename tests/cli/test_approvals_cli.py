"""`relaybot approvals list | remove`: the allow list the gateways use, shown and trimmed."""

from pathlib import Path

from typer.testing import CliRunner

from bot.cli.main import app
from bot.plugins.allowlist import LocalAllowList
from tests.support.cli_process import env_for


def test_approvals_list_and_remove_by_number_or_exact_command(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("llm:\n  model: openai/x\n")
    allowed = LocalAllowList(tmp_path / "state" / "approvals_allowed.db")
    runner, env = CliRunner(), env_for(tmp_path)
    assert "Nothing is allowed always" in runner.invoke(app, ["approvals", "list"], env=env).output
    allowed.add("pip install requests")
    allowed.add("rm -r build")
    listed = runner.invoke(app, ["approvals", "list"], env=env).output
    assert listed.splitlines() == ["  1  pip install requests", "  2  rm -r build"]
    assert runner.invoke(app, ["approvals", "remove", "2"], env=env).exit_code == 0
    assert allowed.entries() == ["pip install requests"]
    assert runner.invoke(app, ["approvals", "remove", "rm -r build"], env=env).exit_code == 1
    assert runner.invoke(app, ["approvals", "remove", "pip install requests"], env=env).exit_code == 0
    assert allowed.entries() == []
