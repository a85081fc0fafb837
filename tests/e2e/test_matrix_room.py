"""Matrix end to end: the real gateway and matrix-nio against a real Synapse (one per session), the fake model."""

import re
import stat
from pathlib import Path
from typing import Any

import pytest

from bot.access.pairing import PairingBook
from tests.channels.contract.gateways import user_texts
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import GatewayUnderTest
from tests.support.matrix_world import MatrixWorld
from tests.support.platform_matrix import Matrix, matrix_section

OWNER, STRANGER = Matrix.owner, Matrix.stranger


def matrix_bot(tmp_path: Path, fake_llm: FakeLLM, world: MatrixWorld, **section: Any) -> GatewayUnderTest:
    """`relaybot run` with only Matrix enabled, its owner the owner."""
    channel = {"enabled": True, **matrix_section(world, **section)}
    return GatewayUnderTest(tmp_path, fake_llm, [f"matrix:{OWNER}"], {"matrix": channel})


def text(body: str, mention: str | None = None, **relation: Any) -> dict[str, Any]:
    """An `m.text` message content, mentioning `mention` (a user id) and related as `relation` says."""
    content: dict[str, Any] = {"msgtype": "m.text", "body": f"{mention}: {body}" if mention else body}
    if mention:
        content["m.mentions"] = {"user_ids": [mention]}
    if relation:
        content["m.relates_to"] = relation
    return content


async def test_a_dm_is_answered_and_a_room_only_on_a_mention_with_the_reply_quoting_it(
    tmp_path: Path, fake_llm: FakeLLM, matrix_world: MatrixWorld
) -> None:
    world, front = matrix_world, matrix_world.front
    owner = world.client(OWNER)
    async with matrix_bot(tmp_path, fake_llm, world):
        room = await world.direct_room(OWNER)
        assert room is not None
        await owner.send(room, text("good morning"))
        await front.wait_until(lambda: len(front.posted) == 1, "the DM answered")
        group = await world.in_group(OWNER)
        await owner.send(group, text("just chatting among ourselves"))
        asked = await owner.send(group, text("what do you think?", world.bot.user_id))
        await front.wait_until(lambda: len(front.posted) == 2, "the mention answered")
    direct, answer = front.posted
    assert direct.room_id == room and "m.relates_to" not in direct.content  # a DM answer quotes nothing
    assert answer.room_id == group and answer.content["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}
    assert len(fake_llm.requests) == 2 and user_texts(fake_llm)[1].endswith("what do you think?")
    assert "just chatting among ourselves" in str(fake_llm.requests[1]["messages"])  # group context


async def test_a_reply_to_the_bot_is_a_quote_and_a_thread_is_a_session_of_its_own(
    tmp_path: Path, fake_llm: FakeLLM, matrix_world: MatrixWorld
) -> None:
    world, front = matrix_world, matrix_world.front
    owner = world.client(OWNER)
    async with matrix_bot(tmp_path, fake_llm, world):
        group = await world.in_group(OWNER)
        root = await owner.send(group, text("the plan is to ship on friday", world.bot.user_id))
        await front.wait_until(lambda: len(front.posted) == 1, "the first answer")
        first = front.posted[0].event_id
        await owner.send(group, text("why?", **{"m.in_reply_to": {"event_id": first}}))
        await front.wait_until(lambda: len(front.posted) == 2, "the reply to the bot answered")
        threaded = {
            "rel_type": "m.thread",
            "event_id": root,
            "is_falling_back": True,
            "m.in_reply_to": {"event_id": root},
        }
        await owner.send(group, text("in the thread now", world.bot.user_id, **threaded))
        await front.wait_until(lambda: len(front.posted) == 3, "the thread answered")
    quoted = user_texts(fake_llm)[1]
    assert quoted.endswith("why?") and "the plan is to ship on friday" in quoted  # the bot's quoted answer echoes it
    in_thread = front.posted[2].content["m.relates_to"]
    assert in_thread["rel_type"] == "m.thread" and in_thread["event_id"] == root
    thread_request = str(fake_llm.requests[2]["messages"])
    assert "in the thread now" in thread_request and "why?" not in thread_request  # a session of its own


@pytest.mark.parametrize("new_login", [False, True], ids=["same-token", "password-login"])
async def test_a_restart_resumes_from_the_stored_sync_position_without_replaying(
    tmp_path: Path, fake_llm: FakeLLM, matrix_world: MatrixWorld, new_login: bool
) -> None:
    world, front = matrix_world, matrix_world.front
    owner = world.client(OWNER)
    async with matrix_bot(tmp_path, fake_llm, world):  # logged in with the access token
        room = await world.direct_room(OWNER)
        assert room is not None
        await owner.send(room, text("before the restart"))
        await front.wait_until(lambda: len(front.posted) == 1, "the first answer")
    await owner.send(room, text("while it was down"))
    state = tmp_path / "state" / "matrix" / "sync.json"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    login = {"access_token": "", "password": world.bot.password} if new_login else {}
    async with matrix_bot(tmp_path, fake_llm, world, **login):
        await front.wait_until(lambda: len(front.posted) == 2, "the missed message answered")
        await owner.send(room, text("after"))
        await front.wait_until(lambda: len(front.posted) == 3, "the next answer")
    texts = user_texts(fake_llm)
    assert len(texts) == 3 and texts[0].endswith("before the restart")  # never replayed
    assert texts[1].endswith("while it was down") and texts[2].endswith("after")


async def test_a_strangers_invite_is_declined_with_a_pairing_code_and_joined_once_approved(
    tmp_path: Path, fake_llm: FakeLLM, matrix_world: MatrixWorld
) -> None:
    world, front = matrix_world, matrix_world.front
    stranger = world.client(STRANGER)
    async with matrix_bot(tmp_path, fake_llm, world) as bot:
        assert await world.direct_room(STRANGER) is None  # declined: the bot left the room
        await front.wait_until(lambda: len(front.posted) == 1, "the decline recorded")
        (declined,) = front.posted
        assert declined.content.get("declined") and fake_llm.requests == []
        code = re.search(r"pairing code is ([A-Z2-9]{8})", declined.content["body"]).group(1)
        assert PairingBook(bot.config.state_dir / "pairing.json").approve("matrix", code) == STRANGER
        room = await world.direct_room(STRANGER)
        assert room is not None
        await stranger.send(room, text("hello, may I?"))
        await front.wait_until(lambda: len(front.posted) == 2, "the paired stranger answered")
    assert user_texts(fake_llm)[0].endswith("hello, may I?")


async def test_a_homeserver_that_is_down_is_retried_while_the_other_channels_carry_on(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    down = {"enabled": True, "homeserver": "http://127.0.0.1:9", "user_id": "@bot:localhost", "access_token": "syt_x"}
    chat = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url, "streaming": "off"}
    owners = ["telegram:42", f"matrix:{OWNER}"]
    async with GatewayUnderTest(tmp_path, fake_llm, owners, {"telegram": chat, "matrix": down}) as bot:
        await bot.gateway.manager.ready("telegram")
        telegram.text("are you there?", chat_id=42, user_id=42)
        (answer,) = await telegram.wait_for_sent(1)
        await bot.gateway.manager.tried()
        matrix = bot.gateway.manager.health()["matrix"]
    assert answer["text"].endswith("are you there?")
    assert matrix.state == "failed" and matrix.failures >= 1 and "ClientConnectorError" in (matrix.last_error or "")
