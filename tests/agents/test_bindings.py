"""The most specific binding that matches a chat picks its agent; unbound chats go to the default agent."""

from bot.agents.bindings import Bindings
from bot.bus import ChatRef
from bot.config.schema_agents import BindingConfig


def router(*bindings: dict[str, str]) -> Bindings:
    return Bindings([BindingConfig.model_validate(binding) for binding in bindings])


def test_an_unbound_chat_goes_to_the_default_agent() -> None:
    route = router({"agent": "work", "channel": "discord"}).route(ChatRef("telegram", "1"))
    assert route.agent == "main" and route.binding is None


def test_thread_beats_chat_beats_server_beats_account_beats_channel() -> None:
    bindings = router(
        {"agent": "by-channel", "channel": "telegram"},
        {"agent": "by-account", "channel": "telegram", "account": "work"},
        {"agent": "by-server", "channel": "telegram", "server": "g1"},
        {"agent": "by-chat", "channel": "telegram", "chat": "-100"},
        {"agent": "by-thread", "channel": "telegram", "chat": "-100", "thread": "7"},
    )
    assert bindings.route(ChatRef("telegram", "-100", "7", account="work"), "g1").agent == "by-thread"
    assert bindings.route(ChatRef("telegram", "-100", "8", account="work"), "g1").agent == "by-chat"
    assert bindings.route(ChatRef("telegram", "-200", account="work"), "g1").agent == "by-server"
    assert bindings.route(ChatRef("telegram", "-200", account="work")).agent == "by-account"
    assert bindings.route(ChatRef("telegram", "-200", account="home")).agent == "by-channel"
    assert bindings.route(ChatRef("telegram", "-200")).agent == "by-channel"


def test_a_binding_with_an_account_matches_only_that_bot() -> None:
    bindings = router({"agent": "work", "channel": "telegram", "account": "work", "chat": "5"})
    assert bindings.route(ChatRef("telegram", "5", account="work")).agent == "work"
    assert bindings.route(ChatRef("telegram", "5", account="home")).agent == "main"
    assert bindings.route(ChatRef("telegram", "5")).agent == "main"


def test_a_binding_without_an_account_matches_every_account() -> None:
    bindings = router({"agent": "work", "channel": "discord", "server": "g"})
    assert bindings.route(ChatRef("discord", "c1", account="second"), "g").agent == "work"
    assert bindings.route(ChatRef("discord", "c1"), "g").agent == "work"


def test_a_chat_binding_with_an_account_wins_over_one_without() -> None:
    bindings = router(
        {"agent": "any", "channel": "telegram", "chat": "5"},
        {"agent": "one", "channel": "telegram", "chat": "5", "account": "work"},
    )
    assert bindings.route(ChatRef("telegram", "5", account="work")).agent == "one"
    assert bindings.route(ChatRef("telegram", "5", account="home")).agent == "any"


def test_the_route_names_the_binding_that_chose_it() -> None:
    route = router({"agent": "work", "channel": "discord", "server": "g"}).route(ChatRef("discord", "c"), "g")
    assert route.describe() == "work (bindings[0]: discord server g)"
