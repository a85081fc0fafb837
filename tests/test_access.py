import random
from pathlib import Path

from bot.access import PAIRING_ALPHABET, AccessPolicy, Ignore, PairingBook, SendPairingCode, Serve
from bot.bus import ChatRef, InboundMessage, Trust
from bot.config import TelegramConfig


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def book(tmp_path: Path, clock: Clock | None = None, max_pending: int = 10) -> PairingBook:
    rng = random.Random(7)
    return PairingBook(tmp_path / "pairing.json", clock=clock or Clock(), choose=rng.choice, max_pending=max_pending)


def dm(sender: str) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", sender), sender_id=sender, text="hi", sender_name="Someone")


def group(sender: str, mentioned: bool) -> InboundMessage:
    return InboundMessage(
        ChatRef("telegram", "-100"), sender_id=sender, text="hi", is_direct=False, mentioned=mentioned
    )


def policy(tmp_path: Path, pairing: PairingBook | None = None, **section: object) -> AccessPolicy:
    return AccessPolicy("telegram", ["telegram:1", "slack:U9"], TelegramConfig(**section), pairing or book(tmp_path))


def test_owner_is_served_with_full_trust(tmp_path: Path) -> None:
    decision = policy(tmp_path).decide(dm("1"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.OWNER


def test_allow_from_is_served_as_guest(tmp_path: Path) -> None:
    decision = policy(tmp_path, allow_from=["5"]).decide(dm("5"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.GUEST


def test_unknown_sender_gets_a_code_and_the_same_code_when_writing_again(tmp_path: Path) -> None:
    access = policy(tmp_path)
    first = access.decide(dm("7"))
    assert isinstance(first, SendPairingCode) and not first.repeated
    assert len(first.code) == 8 and set(first.code) <= set(PAIRING_ALPHABET)
    assert access.decide(dm("7")) == SendPairingCode(first.code, repeated=True)


def test_approval_takes_effect_for_a_running_policy(tmp_path: Path) -> None:
    pairing = book(tmp_path)
    access = policy(tmp_path, pairing)
    code = access.decide(dm("7")).code
    assert book(tmp_path).approve("telegram", code.lower()) == "7"
    decision = access.decide(dm("7"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.GUEST
    assert book(tmp_path).revoke("telegram", "7")
    assert not isinstance(access.decide(dm("7")), Serve)


def test_a_full_pending_list_drops_the_oldest_code_so_strangers_never_lock_others_out(tmp_path: Path) -> None:
    clock = Clock()
    pairing = book(tmp_path, clock, max_pending=3)
    access = policy(tmp_path, pairing)
    codes = {}
    for user in ("11", "12", "13", "14", "15"):
        clock.now += 1
        decision = access.decide(dm(user))
        assert isinstance(decision, SendPairingCode) and not decision.repeated
        codes[user] = decision.code
    assert [entry.user_id for entry in pairing.pending()] == ["13", "14", "15"]
    assert pairing.approve("telegram", codes["11"]) is None
    assert pairing.approve("telegram", codes["15"]) == "15"


def test_ten_codes_may_wait_per_channel_by_default(tmp_path: Path) -> None:
    pairing = PairingBook(tmp_path / "pairing.json")
    for user in range(11):
        pairing.request("telegram", str(user), "")
    pairing.request("slack", "x", "")
    pending = pairing.pending()
    assert [e.user_id for e in pending if e.channel == "telegram"] == [str(u) for u in range(1, 11)]
    assert [e.user_id for e in pending if e.channel == "slack"] == ["x"]


def test_codes_expire_after_an_hour(tmp_path: Path) -> None:
    clock = Clock()
    pairing = book(tmp_path, clock)
    code = policy(tmp_path, pairing).decide(dm("7")).code
    clock.now += 3601
    assert pairing.approve("telegram", code) is None
    assert pairing.pending() == []


def test_allowlist_policy_ignores_strangers(tmp_path: Path) -> None:
    assert isinstance(policy(tmp_path, dm_policy="allowlist").decide(dm("7")), Ignore)


def test_open_policy_serves_everyone_as_guest(tmp_path: Path) -> None:
    decision = policy(tmp_path, dm_policy="open").decide(dm("7"))
    assert isinstance(decision, Serve) and decision.message.trust is Trust.GUEST


def test_groups_need_a_mention_by_default(tmp_path: Path) -> None:
    access = policy(tmp_path)
    assert isinstance(access.decide(group("1", mentioned=False)), Ignore)
    assert isinstance(access.decide(group("1", mentioned=True)), Serve)
    assert isinstance(access.decide(group("8", mentioned=True)), Ignore)


def test_group_policies_open_and_off(tmp_path: Path) -> None:
    assert isinstance(policy(tmp_path, group_policy="open").decide(group("1", mentioned=False)), Serve)
    assert isinstance(policy(tmp_path, group_policy="off").decide(group("1", mentioned=True)), Ignore)


def test_pairing_file_is_private(tmp_path: Path) -> None:
    policy(tmp_path).decide(dm("7"))
    assert (tmp_path / "pairing.json").stat().st_mode & 0o777 == 0o600
