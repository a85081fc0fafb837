"""The ability checks the gateway makes per message: the same answers as `isinstance`, once per channel class."""

from bot.bus import ChatRef
from channels.abilities import ShowsTyping, StreamsReplies, dismisses, reacts, shows_typing, streams_replies


class Typist:
    async def show_typing(self, chat: ChatRef) -> None:
        """Typing shown."""


class LoudTypist(Typist):
    async def react(self, chat: ChatRef, message_id: str, status: str) -> None:
        """Reaction added."""


class Mute:
    """No abilities at all."""


def test_ability_checks_answer_as_isinstance_does() -> None:
    for channel in (Typist(), LoudTypist(), Mute(), Typist()):
        assert shows_typing(channel) is isinstance(channel, ShowsTyping)
        assert streams_replies(channel) is isinstance(channel, StreamsReplies)
    assert reacts(LoudTypist()) and not reacts(Typist())
    assert not dismisses(Mute())
