"""Buttons and reactions on every platform, through the adapter alone: choices shown natively, a press comes back,
a user's message marked seen and then done."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.bus import Choice, OutboundMessage
from channels.abilities import Reacts
from channels.base import Channel
from tests.support.adapter import AdapterUnderTest
from tests.support.platform import Platform

CHOICES = (Choice("once", "Allow once", "primary"), Choice("always", "Allow always"), Choice("deny", "Deny", "danger"))


@pytest_asyncio.fixture
async def adapter(tmp_path: Path, platform: Platform) -> AsyncIterator[AdapterUnderTest[Channel]]:
    async with platform.adapter(tmp_path / "media") as running:
        yield running


async def test_choices_are_buttons_and_a_press_comes_back_as_the_choice(
    adapter: AdapterUnderTest[Channel], platform: Platform
) -> None:
    await adapter.channel.send(OutboundMessage(platform.group_chat, "Run `ls`?", choices=CHOICES, prompt_id="K7Q"))
    await platform.wait_sent(1)
    assert platform.buttons(0) == ["Allow once", "Allow always", "Deny"]
    platform.press(0, "K7Q", "always", "Allow always", platform.owner)
    pressed = await adapter.next()
    assert pressed.press is not None and (pressed.press.prompt_id, pressed.press.choice_id) == ("K7Q", "always")
    assert pressed.sender_id == platform.owner and pressed.text == "Allow always"


async def test_a_message_is_marked_seen_then_done(adapter: AdapterUnderTest[Channel], platform: Platform) -> None:
    if not platform.reacts:  # declared: no reactions, and the channel offers none, so the gateway never asks
        assert not isinstance(adapter.channel, Reacts)
        return
    assert isinstance(adapter.channel, Reacts)
    platform.dm("please do it", platform.owner)
    message = await adapter.next()
    await adapter.channel.react(message.chat, message.platform_message_id, "seen")
    (seen,) = platform.marks()
    await adapter.channel.react(message.chat, message.platform_message_id, "done")
    (done,) = platform.marks()
    assert seen != done
