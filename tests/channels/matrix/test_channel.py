"""The Matrix channel alone against a real Synapse: a failing homeserver waited out, a lost answer sent once."""

from pathlib import Path

import pytest

from bot.bus import ChatRef, OutboundMessage
from bot.config.channels.matrix import MatrixConfig
from bot.errors import ChannelError
from channels.matrix.channel import MatrixChannel
from tests.support.harness import RecordedSleep
from tests.support.matrix_world import MatrixWorld
from tests.support.platform_matrix import Matrix, matrix_adapter


async def test_a_failing_homeserver_is_retried_with_backoff_and_its_retry_after_honoured(
    tmp_path: Path, matrix_world: MatrixWorld
) -> None:
    sleep = RecordedSleep()
    front = matrix_world.front
    async with matrix_adapter(matrix_world, tmp_path / "media", sleep) as bot:
        front.fail_sync(502, "M_UNKNOWN", "Bad Gateway")
        front.fail_sync(502, "M_UNKNOWN", "Bad Gateway")
        front.fail_sync(429, "M_LIMIT_EXCEEDED", "Too Many Requests", 4500)
        room = await matrix_world.direct_room(Matrix.owner)
        assert room is not None
        await matrix_world.client(Matrix.owner).send(room, {"msgtype": "m.text", "body": "still there?"})
        message = await bot.next(timeout=20)
    assert message.text == "still there?" and message.is_direct and message.sender_id == Matrix.owner
    assert sleep.waits[:2] == sorted(sleep.waits[:2]) and sleep.waits[2] == 4.5  # backoff grows; 429 says how long


async def test_missing_credentials_name_the_config_key(tmp_path: Path) -> None:
    config = MatrixConfig(enabled=True, homeserver="http://127.0.0.1:9", user_id="@bot:localhost")

    async def publish(message: object) -> None: ...

    channel = MatrixChannel(publish, config, tmp_path, tmp_path / "sync.json")
    with pytest.raises(ChannelError, match="channels.matrix needs access_token or password"):
        await channel.start()


async def test_a_send_whose_answer_was_lost_is_retried_as_the_same_event(
    tmp_path: Path, matrix_world: MatrixWorld
) -> None:
    front = matrix_world.front
    async with matrix_adapter(matrix_world, tmp_path / "media", RecordedSleep()) as bot:
        front.lose_send_answer()
        chat = ChatRef("matrix", matrix_world.group_id)
        await bot.channel.send(OutboundMessage(chat, "exactly once, please"))
    assert front.send_attempts() == 2
    assert len({posted.event_id for posted in front.posted}) == 1  # Synapse knew the transaction id
