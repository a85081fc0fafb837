from bot.commands.catalogue import CommandSpec
from channels.discord.menu import command_payloads, same_commands

MENU = [
    CommandSpec("New", "Start over"),
    CommandSpec("pair", "x" * 150, "private"),
    CommandSpec("activation", "", "groups"),
]


def test_global_commands_say_where_they_are_offered() -> None:
    payloads = command_payloads(MENU, in_guild=False)
    assert [(p["name"], p["contexts"]) for p in payloads] == [("new", [0, 1]), ("pair", [1]), ("activation", [0])]
    assert len(payloads[1]["description"]) == 100 and payloads[2]["description"] == "activation"
    assert all(p["options"][0]["name"] == "args" and not p["options"][0]["required"] for p in payloads)


def test_guild_commands_leave_out_the_dm_only_ones() -> None:
    assert [p["name"] for p in command_payloads(MENU, in_guild=True)] == ["new", "activation"]


def test_registered_commands_match_regardless_of_ids_and_order() -> None:
    wanted = command_payloads(MENU, in_guild=False)
    registered = [{**p, "id": str(i), "version": "1"} for i, p in enumerate(reversed(wanted))]
    assert same_commands(registered, wanted)
    assert not same_commands(registered[1:], wanted)
    assert not same_commands([{**registered[0], "description": "changed"}, *registered[1:]], wanted)
