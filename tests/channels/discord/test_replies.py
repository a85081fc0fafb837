from types import SimpleNamespace

from channels.discord.replies import TOKEN_LIFETIME, OpenInteractions


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_interactions_are_found_by_id_user_and_message_until_their_token_expires() -> None:
    clock = Clock()
    open_ = OpenInteractions(clock)
    open_.add(SimpleNamespace(id=1), "discord:5", "42", None, is_command=True)
    open_.add(SimpleNamespace(id=2), "discord:5", "43", "77", is_command=False)
    assert open_.get("1").is_command and open_.of_user("discord:5", "43").message_id == "77"
    assert open_.on_message("77").interaction.id == 2 and open_.of_user("discord:6", "43") is None
    clock.now = TOKEN_LIFETIME + 1
    assert open_.get("1") is None and open_.of_user("discord:5", "43") is None and open_.on_message("77") is None


def test_open_interactions_are_bounded() -> None:
    open_ = OpenInteractions(Clock(), limit=2)
    for interaction_id in range(3):
        open_.add(SimpleNamespace(id=interaction_id), "discord:5", "42", None, is_command=True)
    assert open_.get("0") is None and open_.get("2") is not None
