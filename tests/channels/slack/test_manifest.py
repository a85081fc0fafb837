from bot.app.command_menu import built_in_menu
from channels.slack.manifest import slack_manifest
from channels.slack.menu import RESERVED, command_name


def test_the_manifest_asks_for_socket_mode_interactivity_and_the_events_the_adapter_reads() -> None:
    manifest = slack_manifest("helper", built_in_menu())
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] and settings["interactivity"]["is_enabled"]
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "app_mention",
        "message.channels",
        "message.groups",
        "message.im",
    }
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {"commands", "chat:write", "reactions:write", "files:write", "app_mentions:read"} <= scopes
    assert manifest["features"]["bot_user"]["display_name"] == "helper"


def test_every_command_is_offered_under_a_name_slack_routes_to_the_app() -> None:
    commands = slack_manifest("relaybot", built_in_menu())["features"]["slash_commands"]
    names = [c["command"] for c in commands]
    assert names[:3] == ["/new", "/stop", "/relaybot-status"] and "/relaybot-help" in names
    assert not any(name.lstrip("/") in RESERVED for name in names)
    assert [command_name(name) for name in names] == [spec.name for spec in built_in_menu()]
    assert all(len(name) <= 32 and name == name.lower() for name in names)
