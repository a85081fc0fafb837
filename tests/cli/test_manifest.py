import yaml
from typer.testing import CliRunner

from bot.cli.main import app


def test_slack_manifest_prints_yaml_with_plugin_commands() -> None:
    result = CliRunner().invoke(app, ["manifest", "slack", "--name", "ava", "--command", "weather=Today's weather"])
    assert result.exit_code == 0, result.output
    manifest = yaml.safe_load(result.output)
    assert manifest["display_information"]["name"] == "ava"
    commands = {c["command"]: c["description"] for c in manifest["features"]["slash_commands"]}
    assert commands["/weather"] == "Today's weather" and "/new" in commands


def test_slack_manifest_refuses_an_empty_command() -> None:
    result = CliRunner().invoke(app, ["manifest", "slack", "--command", "=nothing"])
    assert result.exit_code == 2 and "--command" in result.output


def test_a_platform_without_a_manifest_is_refused_naming_those_with_one() -> None:
    result = CliRunner().invoke(app, ["manifest", "telegram"])
    assert result.exit_code == 2 and "'telegram' has no app manifest" in result.output and "slack" in result.output
