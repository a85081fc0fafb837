from pathlib import Path

from bot.access.pairing import PAIRING_ALPHABET, Pairing, PairingBook
from bot.access.policy import AccessPolicy, Ignore, Overheard, SendPairingCode, Serve
from bot.bus import ChatRef, InboundMessage, Trust
from bot.config.channels.telegram import TelegramConfig
from tests.access.books import Books, Clock


def dm(sender: str) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", sender), sender_id=sender, text="hi", sender_name="Someone")


def group(sender: str, mentioned: bool) -> InboundMessage:
    return InboundMessage(
        ChatRef("telegram", "-100"), sender_id=sender, text="hi", is_direct=False, mentioned=mentioned
    )


def policy(book: Books, pairing: Pairing | None = None, **section: object) -> AccessPolicy:
    return AccessPolicy("telegram", ["telegram:1", "slack:U9"], TelegramConfig(**section), pairing or book())


def test_owner_is_served_with_full_trust(book: Books) -> None:
    decision = policy(book).decide(dm("1"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.OWNER


def test_allow_from_is_served_as_user(book: Books) -> None:
    decision = policy(book, allow_from=["5"]).decide(dm("5"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.USER


def test_roles_entry_admits_the_sender_with_that_role(book: Books) -> None:
    roles = {"telegram:6": Trust.ADMIN, "discord:7": Trust.ADMIN}
    access = AccessPolicy("telegram", [], TelegramConfig(), book(), roles)
    decision = access.decide(dm("6"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.ADMIN
    assert isinstance(access.decide(dm("7")), SendPairingCode)


def test_roles_are_ordered_guest_user_admin_owner() -> None:
    assert Trust.OWNER.at_least(Trust.ADMIN) and Trust.ADMIN.at_least(Trust.USER) and Trust.USER.at_least(Trust.GUEST)
    assert not Trust.GUEST.at_least(Trust.USER)


def test_unknown_sender_gets_a_code_and_the_same_code_when_writing_again(book: Books) -> None:
    access = policy(book)
    first = access.decide(dm("7"))
    assert isinstance(first, SendPairingCode) and not first.repeated
    assert len(first.code) == 8 and set(first.code) <= set(PAIRING_ALPHABET)
    assert access.decide(dm("7")) == SendPairingCode(first.code, repeated=True)


def test_approval_takes_effect_for_a_running_policy(book: Books) -> None:
    pairing = book()
    access = policy(book, pairing)
    code = access.decide(dm("7")).code
    assert book().approve("telegram", code.lower()) == "7"
    decision = access.decide(dm("7"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.USER
    assert book().revoke("telegram", "7")
    assert not isinstance(access.decide(dm("7")), Serve)


def test_a_full_pending_list_drops_the_oldest_code_so_strangers_never_lock_others_out(book: Books) -> None:
    clock = Clock()
    pairing = book(clock, max_pending=3)
    access = policy(book, pairing)
    codes = {}
    for user in ("11", "12", "13", "14", "15"):
        clock.now += 1
        decision = access.decide(dm(user))
        assert isinstance(decision, SendPairingCode) and not decision.repeated
        codes[user] = decision.code
    assert [entry.user_id for entry in pairing.pending()] == ["13", "14", "15"]
    assert pairing.approve("telegram", codes["11"]) is None
    assert pairing.approve("telegram", codes["15"]) == "15"


def test_ten_codes_may_wait_per_channel_by_default(book: Books) -> None:
    pairing = book()
    for user in range(11):
        pairing.request("telegram", str(user), "")
    pairing.request("slack", "x", "")
    pending = pairing.pending()
    assert [e.user_id for e in pending if e.channel == "telegram"] == [str(u) for u in range(1, 11)]
    assert [e.user_id for e in pending if e.channel == "slack"] == ["x"]


def test_codes_expire_after_an_hour(book: Books) -> None:
    clock = Clock()
    pairing = book(clock)
    code = policy(book, pairing).decide(dm("7")).code
    clock.now += 3601
    assert pairing.approve("telegram", code) is None
    assert pairing.pending() == []


def test_allowlist_policy_ignores_strangers(book: Books) -> None:
    assert isinstance(policy(book, dm_policy="allowlist").decide(dm("7")), Ignore)


def test_open_policy_serves_everyone_as_guest(book: Books) -> None:
    decision = policy(book, dm_policy="open").decide(dm("7"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.GUEST


def test_groups_need_a_mention_by_default(book: Books) -> None:
    access = policy(book)
    assert isinstance(access.decide(group("1", mentioned=False)), Overheard)
    assert isinstance(access.decide(group("8", mentioned=False)), Ignore)
    assert isinstance(access.decide(group("1", mentioned=True)), Serve)
    assert isinstance(access.decide(group("8", mentioned=True)), Ignore)


def test_group_policies_open_and_off(book: Books) -> None:
    assert isinstance(policy(book, group_policy="open").decide(group("1", mentioned=False)), Serve)
    assert isinstance(policy(book, group_policy="off").decide(group("1", mentioned=True)), Ignore)


def test_pairing_file_is_private(tmp_path: Path) -> None:
    pairing = PairingBook(tmp_path / "pairing.json")
    AccessPolicy("telegram", [], TelegramConfig(), pairing).decide(dm("7"))
    assert (tmp_path / "pairing.json").stat().st_mode & 0o777 == 0o600
