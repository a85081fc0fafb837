"""The native command menu: the catalogue's built-in commands in order, then each plugin command with its docstring."""

from pathlib import Path

from bot.app.command_menu import PLUGIN_DESCRIPTION, built_in_menu, command_menu, menu_users
from bot.bus import Trust
from bot.commands.catalogue import CommandSpec
from bot.config.schema import Config
from bot.hooks.handlers import Hooks
from bot.hooks.hook_events import CommandInvoked


async def weather(event: CommandInvoked) -> str:
    """Today's weather where you are.

    More text that the menu leaves out.
    """
    return "sunny"


def test_the_menu_lists_built_in_commands_then_plugin_commands() -> None:
    hooks = Hooks()
    hooks.command("weather", weather)
    hooks.command("ping", lambda event: "pong")
    hooks.command("approve", lambda event: "built in, listed once")
    menu = command_menu(hooks)
    names = [spec.name for spec in menu]
    expected = [
        "new",
        "stop",
        "status",
        "model",
        "usage",
        "sessions",
        "resume",
        "help",
        "agent",
        "approve",
        "deny",
        "activation",
        "pair",
    ]
    assert names[: len(expected)] == expected
    assert names.count("approve") == 1 and menu[: len(expected)] == built_in_menu()
    assert menu[-2:] == [
        CommandSpec("ping", PLUGIN_DESCRIPTION),
        CommandSpec("weather", "Today's weather where you are."),
    ]


def test_each_built_in_is_offered_in_the_chats_it_applies_to() -> None:
    scopes = {spec.name: spec.scope for spec in built_in_menu()}
    assert scopes["activation"] == "groups" and scopes["pair"] == "all" and scopes["new"] == "all"
    assert "start" not in scopes and "exit" not in scopes


def test_menus_are_scoped_by_the_lowest_role_and_offered_to_each_channels_owners_and_admins(tmp_path: Path) -> None:
    menu = {spec.name: spec for spec in built_in_menu()}
    assert menu["approve"].privileged and menu["pair"].privileged and menu["activation"].role is Trust.ADMIN
    assert not menu["new"].privileged and not menu["help"].privileged
    config = Config.model_validate(
        {
            "workspace": tmp_path / "workspace",
            "state_dir": tmp_path / "state",
            "llm": {"model": "openai/x"},
            "owners": ["telegram:1", "ann"],
            "identities": {"ann": ["telegram:2", "discord:20"], "bob": ["telegram:3"]},
            "roles": {"bob": "admin", "telegram:4": "user", "discord:5": "admin"},
        }
    )
    assert menu_users(config, "telegram") == ("1", "2", "3")
    assert menu_users(config, "discord") == ("20", "5")
