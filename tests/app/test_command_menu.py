"""The native command menu: the built-in commands in order, then each plugin command with its docstring."""

from bot.app.command_menu import BUILT_IN, PLUGIN_DESCRIPTION, command_menu
from bot.hooks.events import CommandInvoked
from bot.hooks.handlers import Hooks
from channels.base import CommandSpec


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
    assert names[:11] == [
        "new",
        "stop",
        "status",
        "model",
        "usage",
        "sessions",
        "resume",
        "help",
        "approve",
        "deny",
        "activation",
    ]
    assert names.count("approve") == 1 and menu[: len(BUILT_IN)] == list(BUILT_IN)
    assert menu[-2:] == [
        CommandSpec("ping", PLUGIN_DESCRIPTION),
        CommandSpec("weather", "Today's weather where you are."),
    ]
    assert next(spec for spec in menu if spec.name == "activation").scope == "groups"
