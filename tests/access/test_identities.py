"""One person across apps: roles, pairing links and the message's person follow the person, not the account."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.access.identities import Identities
from bot.access.pairing import Pairing
from bot.access.policy import AccessPolicy, SendPairingCode, Serve
from bot.bus import ChatRef, InboundMessage, Trust
from bot.config.channels.discord import DiscordConfig
from bot.config.channels.telegram import TelegramConfig
from bot.config.schema import Config
from bot.errors import ConfigError
from tests.access.books import Books

PEOPLE = {"alice": ["telegram:123", "discord:456"], "bob": ["telegram:7"]}


def dm(channel: str, sender: str) -> InboundMessage:
    return InboundMessage(ChatRef(channel, sender), sender_id=sender, text="hi")


def served(policy: AccessPolicy, message: InboundMessage) -> InboundMessage:
    decision = policy.decide(message)
    assert isinstance(decision, Serve), decision
    return decision.message


def policies(pairing: Pairing, owners: list[str], roles: dict[str, Trust]) -> tuple[AccessPolicy, AccessPolicy]:
    people = Identities(PEOPLE, pairing.people)
    telegram = AccessPolicy("telegram", owners, TelegramConfig(), pairing, roles, identities=people)
    discord = AccessPolicy("discord", owners, DiscordConfig(), pairing, roles, identities=people)
    return telegram, discord


def test_a_role_given_to_one_account_or_the_person_covers_every_account(book: Books) -> None:
    telegram, discord = policies(book(), ["telegram:1"], {"telegram:123": Trust.ADMIN})
    assert served(discord, dm("discord", "456")).trust is Trust.ADMIN
    telegram, discord = policies(book(), ["bob"], {"alice": Trust.USER, "discord:456": Trust.ADMIN})
    message = served(telegram, dm("telegram", "123"))
    assert (message.trust, message.person) == (Trust.ADMIN, "alice")
    assert served(telegram, dm("telegram", "7")).trust is Trust.OWNER


def test_an_account_paired_on_one_app_makes_the_person_known_on_the_others(book: Books) -> None:
    pairing = book()
    telegram, discord = policies(pairing, [], {})
    first = telegram.decide(dm("telegram", "123"))
    assert isinstance(first, SendPairingCode)
    assert pairing.approve("telegram", first.code) == "123"
    message = served(discord, dm("discord", "456"))
    assert (message.trust, message.person) == (Trust.USER, "alice")


def test_approving_as_a_person_links_the_new_account_and_revoking_unlinks_it(book: Books) -> None:
    pairing = book()
    telegram, discord = policies(pairing, [], {"alice": Trust.ADMIN})
    code = discord.decide(dm("discord", "999"))
    assert isinstance(code, SendPairingCode)
    assert pairing.approve("discord", code.code, "alice") == "999"
    assert pairing.people() == {"discord:999": "alice"}
    message = served(discord, dm("discord", "999"))
    assert (message.trust, message.person) == (Trust.ADMIN, "alice")
    assert pairing.revoke("discord", "999") and pairing.people() == {}
    assert isinstance(discord.decide(dm("discord", "999")), SendPairingCode)


def test_an_account_of_nobody_has_no_person(book: Books) -> None:
    telegram, _ = policies(book(), ["telegram:1"], {})
    assert served(telegram, dm("telegram", "1")).person is None


def test_config_refuses_an_account_of_two_people_and_unknown_names(tmp_path: Path) -> None:
    base = {"workspace": tmp_path, "state_dir": tmp_path}
    with pytest.raises(ValidationError, match="telegram:1 belongs to both a and b"):
        Config.model_validate({**base, "identities": {"a": ["telegram:1"], "b": ["telegram:1"]}})
    with pytest.raises(ConfigError, match="'carol' is neither") as caught:
        Config.model_validate({**base, "identities": {"alice": ["telegram:1"]}, "roles": {"carol": "admin"}})
    assert caught.value.key == "roles"
    config = Config.model_validate(
        {**base, "identities": PEOPLE, "owners": ["alice"], "budgets": {"senders": {"bob": {}}}}
    )
    assert config.identities["alice"] == ["telegram:123", "discord:456"]
    assert config.owner_accounts() == {"telegram:123", "discord:456"}
