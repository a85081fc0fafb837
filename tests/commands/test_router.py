"""The command router: a built-in is answered only where the catalogue says, a plugin's command beside them."""

import pytest

from bot.bus import ChatRef, InboundMessage, Trust
from bot.commands.catalogue import AGENT, BUILT_INS, HELP, NEW
from bot.commands.parse import Invocation
from bot.commands.router import CommandRouter, Handler


def typed(text: str, system: bool = False) -> InboundMessage:
    return InboundMessage(ChatRef("test", "1"), "u1", text, Trust.OWNER, kind="system" if system else "user")


async def said(message: InboundMessage, found: Invocation) -> str:
    return f"{found.word}:{found.args}"


async def test_a_command_is_routed_to_its_handler_with_its_arguments() -> None:
    router: CommandRouter[Handler[str]] = CommandRouter("loop")
    router.add(HELP, said)
    routed = router.route(typed("/help@mybot now"))
    assert routed is not None and await routed[1](typed("/help"), routed[0]) == "help:now"
    assert router.route(typed("help")) is None and router.route(typed("/status")) is None
    assert router.route(typed("/help", system=True)) is None


def test_a_handler_added_where_the_catalogue_does_not_answer_the_command_is_refused() -> None:
    with pytest.raises(ValueError, match="/agent is answered at the roster"):
        CommandRouter[Handler[str]]("loop").add(AGENT, said)
    with pytest.raises(ValueError, match="/new is answered at the lane"):
        CommandRouter[Handler[str]]("loop").add(NEW, said)


async def test_a_plugin_command_goes_through_the_same_router_and_is_read_live() -> None:
    router: CommandRouter[Handler[str]] = CommandRouter("loop")
    commands: dict[str, object] = {}
    router.add_plugins(commands, said)
    assert router.route(typed("/weather Oslo")) is None
    commands["weather"] = object()  # registered after the router was made
    routed = router.route(typed("/weather Oslo"))
    assert routed is not None and await routed[1](typed("/weather"), routed[0]) == "weather:Oslo"


def test_every_built_in_names_one_place_that_answers_it() -> None:
    places = {command.name: command.answered for command in BUILT_INS}
    assert places["agent"] == "roster" and places["activation"] == "gate" and places["exit"] == "terminal"
    assert places["new"] == places["resume"] == "lane"
    assert {places[name] for name in ("stop", "help", "status", "model", "approve")} == {"loop"}
