"""The Mattermost channel against the fake server: threads, slash commands, signed buttons, typing, reconnects."""

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio

from bot.bus import ChatRef, OutboundMessage
from bot.commands.catalogue import CommandSpec
from bot.errors import ChannelError
from channels.catchup import ActiveChats
from tests.fakes.mattermost_payloads import post
from tests.fakes.mattermost_server import FakeMattermost
from tests.support.adapter import AdapterUnderTest
from tests.support.selfhosted import MattermostAdapter, posted_post

ANN = "annannannannannannannann00"


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeMattermost]:
    async with FakeMattermost() as server:
        yield server


@pytest_asyncio.fixture
async def bot(fake: FakeMattermost, tmp_path: Path) -> AsyncIterator[MattermostAdapter]:
    async with MattermostAdapter(fake, tmp_path / "media", {"reconnect_delay": 0.01}) as running:
        yield running


async def test_a_mention_in_a_thread_is_a_session_of_its_own_and_the_answer_stays_in_it(
    bot: AdapterUnderTest, fake: FakeMattermost
) -> None:
    root = posted_post(fake.channel_message("a plan", ANN, mention=False))
    assert not (await bot.next()).mentioned  # the channel publishes it; the gateway leaves it unanswered
    fake.channel_message("what do you think?", ANN, mention=True, root_id=root["id"])
    message = await bot.next()
    assert message.chat == ChatRef("mattermost", fake.town_square, root["id"]) and message.mentioned
    await bot.channel.send(OutboundMessage(message.chat, "Looks good."))
    await fake.wait_for_sent(1)
    assert fake.sent[0]["root_id"] == root["id"]
    fake.channel_message("and the budget?", ANN, mention=False, root_id=root["id"])
    follow_up = await bot.next()
    assert follow_up.mentioned  # in a thread the bot answered, no @ is needed


async def test_commands_are_registered_as_slash_commands_and_come_back_as_text(
    bot: AdapterUnderTest, fake: FakeMattermost
) -> None:
    await bot.channel.set_commands([CommandSpec("new", "Start afresh"), CommandSpec("status", "How I am")])
    assert sorted(c["trigger"] for c in fake.commands.values()) == ["new", "relaybot-status"]
    assert await fake.slash("relaybot-status", "please", ANN) == 200
    message = await bot.next()
    assert message.text == "/status please" and message.sender_id == ANN and message.is_direct
    await bot.channel.set_commands([CommandSpec("new", "Start afresh")])
    assert [c["trigger"] for c in fake.commands.values()] == ["new"]  # the earlier ones replaced, not piled up


async def test_a_slash_command_with_a_wrong_token_is_refused(bot: AdapterUnderTest, fake: FakeMattermost) -> None:
    await bot.channel.set_commands([CommandSpec("new", "Start afresh")])
    (command,) = fake.commands.values()
    command["token"] = "forged"
    assert await fake.slash("new", "", ANN) == 403
    assert bot.nothing_more()


async def test_a_press_without_relaybots_signature_is_refused(bot: AdapterUnderTest, fake: FakeMattermost) -> None:
    callback = bot.channel.webhook_routes()[0].path  # type: ignore[attr-defined]
    forged = {"user_id": ANN, "channel_id": fake.town_square, "post_id": "p", "context": {"prompt": "K", "choice": "x"}}
    url = bot.channel._callback + callback  # type: ignore[attr-defined]
    async with aiohttp.ClientSession() as session, session.post(url, json=forged) as response:
        assert response.status == 403
    assert bot.nothing_more()


async def test_typing_goes_through_the_websocket(bot: AdapterUnderTest, fake: FakeMattermost) -> None:
    await bot.channel.show_typing(ChatRef("mattermost", fake.town_square, "rootid"))  # type: ignore[attr-defined]
    await fake.wait_until(lambda: bool(fake.typing), "a typing action")
    assert fake.typing == [(fake.town_square, "rootid")]


async def test_after_the_websocket_drops_the_channel_reconnects_and_reads_on(
    bot: AdapterUnderTest, fake: FakeMattermost
) -> None:
    await fake.drop()
    fake.dm("still there?", ANN)
    message = await bot.next()
    assert message.text == "still there?" and fake.connections == 2


async def test_an_edited_post_arrives_as_an_edit_of_it(bot: AdapterUnderTest, fake: FakeMattermost) -> None:
    first = fake.dm("meet at 5", ANN)
    original = await bot.next()
    fake.edit(first, "meet at 6")
    edit = await bot.next()
    assert edit.edit_of == original.platform_message_id and edit.text == "meet at 6"


async def test_a_private_notice_is_ephemeral_where_allowed_and_posted_where_not(
    bot: AdapterUnderTest, fake: FakeMattermost
) -> None:
    chat = ChatRef("mattermost", fake.town_square)
    await bot.channel.send(OutboundMessage(chat, "Not yours to approve.", kind="notice", private_to=ANN))
    await fake.wait_for_sent(1)  # refused (the bot is no system admin): everyone sees it
    fake.may_post_ephemeral = True
    await bot.channel.send(OutboundMessage(chat, "Only you see this.", kind="notice", private_to=ANN))
    assert fake.ephemeral == [(ANN, "Only you see this.")] and fake.sent_texts() == ["Not yours to approve."]


async def test_a_refused_token_fails_the_start_with_the_servers_reason(fake: FakeMattermost, tmp_path: Path) -> None:
    with pytest.raises(ChannelError, match="Invalid or expired session"):
        async with MattermostAdapter(fake, tmp_path / "media", {"token": "revoked-token"}):
            pass


async def test_a_restart_reads_what_a_dm_and_a_thread_were_sent_while_it_was_down(
    fake: FakeMattermost, tmp_path: Path
) -> None:
    chats = ActiveChats(tmp_path / "active.json")
    async with MattermostAdapter(fake, tmp_path / "media", {}, chats) as first:
        fake.dm("before the restart", ANN)
        await first.next()
        fake.channel_message("a plan", ANN, mention=True)
        planned = await first.next()
    fake.dm_while_offline("while you were away", ANN)
    reply = post(ANN, fake.town_square, "and in the thread", root_id=planned.chat.thread_id or "")
    fake.posts[reply["id"]] = reply
    async with MattermostAdapter(fake, tmp_path / "media", {}, chats) as second:
        missed = [await second.next(), await second.next()]
        assert second.nothing_more()
    assert sorted(m.text for m in missed) == ["and in the thread", "while you were away"]
    in_thread = next(m for m in missed if m.chat.thread_id)
    assert in_thread.mentioned and in_thread.chat == planned.chat
