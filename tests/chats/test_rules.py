from bot.bus import ChatRef
from bot.chats.rules import ChatRulesBook
from bot.config.channels.discord import DiscordConfig
from bot.config.channels.telegram import TelegramConfig


def book() -> ChatRulesBook:
    telegram = TelegramConfig.model_validate(
        {
            "group_policy": "mention",
            "allow_from": [5],
            "queue_mode": "followup",
            "groups": {
                -100: {
                    "group_policy": "open",
                    "persona": "helper",
                    "topics": {42: {"persona": "coder", "queue_mode": "steer", "group_history": 0}},
                }
            },
        }
    )
    discord = DiscordConfig.model_validate(
        {"groups": {"G1": {"group_policy": "off", "allow_from": ["7"]}, "C2": {"group_policy": "open"}}}
    )
    return ChatRulesBook({"telegram": telegram, "discord": discord}, queue_mode="collect")


def test_a_chat_without_a_group_entry_follows_its_channel_section() -> None:
    rules = book().for_chat(ChatRef("telegram", "-200"), "-200")
    assert (rules.group_policy, rules.queue_mode, rules.allow_from, rules.persona) == (
        "mention",
        "followup",
        frozenset({"5"}),
        None,
    )


def test_a_group_entry_overrides_the_channel_and_keeps_what_it_leaves_unset() -> None:
    rules = book().for_chat(ChatRef("telegram", "-100"), "-100")
    assert (rules.group_policy, rules.persona, rules.queue_mode, rules.group_history) == (
        "open",
        "helper",
        "followup",
        20,
    )


def test_a_topic_entry_wins_over_its_group() -> None:
    rules = book().for_chat(ChatRef("telegram", "-100", "42"), "-100")
    assert (rules.group_policy, rules.persona, rules.queue_mode, rules.group_history) == ("open", "coder", "steer", 0)


def test_a_discord_channel_entry_wins_over_its_guild_entry() -> None:
    rulebook = book()
    assert rulebook.for_chat(ChatRef("discord", "C9"), "G1").group_policy == "off"
    assert rulebook.for_chat(ChatRef("discord", "C9"), "G1").allow_from == frozenset({"7"})
    both = rulebook.for_chat(ChatRef("discord", "C2"), "G1")
    assert (both.group_policy, both.allow_from) == ("open", frozenset({"7"}))


def test_direct_chats_ignore_group_entries_and_unconfigured_channels_get_the_agent_queue_mode() -> None:
    rulebook = book()
    assert rulebook.for_chat(ChatRef("telegram", "-100"), "-100", is_direct=True).group_policy == "mention"
    assert rulebook.for_chat(ChatRef("api", "me")).queue_mode == "collect"
