"""The relay of triggers' own sessions: replies go on to the trigger's chat, progress notes stay behind."""

from __future__ import annotations

import pytest

from bot.bus import ChatRef, Choice, OutboundMessage
from bot.errors import ChannelError
from channels.gateway.trigger_relay import TriggerRelay


async def test_a_reply_goes_on_to_the_triggers_chat_once_under_its_own_id() -> None:
    forwarded: list[OutboundMessage] = []

    async def forward(message: OutboundMessage) -> bool:
        forwarded.append(message)
        return True

    relay = TriggerRelay({"github": ChatRef("telegram", "5")}, forward)
    own = ChatRef("trigger", "github")
    reply = OutboundMessage(own, "PR 7 is fine", in_reply_to="run-1", choices=(Choice("a", "A"),), prompt_id="p")
    await relay.send(OutboundMessage(own, "searching…", kind="progress"))
    await relay.send(reply)
    [sent] = forwarded
    assert sent.chat == ChatRef("telegram", "5") and sent.text == "PR 7 is fine" and sent.id == f"{reply.id}:relayed"
    assert sent.in_reply_to == "run-1" and sent.choices == () and sent.prompt_id is None
    with pytest.raises(ChannelError):
        await relay.send(OutboundMessage(ChatRef("trigger", "gone"), "x"))
