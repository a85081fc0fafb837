"""Matrix end to end with encryption: a person's own matrix-nio client (its own crypto store) talks to the bot in a
megolm-encrypted room on the real Synapse; the dev extra brings the `matrix-e2e` extra."""

from __future__ import annotations

import io
import json
import stat
import time
from pathlib import Path
from typing import Any

from bot.bus import Attachment, ChatRef, OutboundMessage
from channels.matrix.crypto import key_chores
from tests.channels.contract.gateways import user_texts
from tests.e2e.test_matrix_room import matrix_bot
from tests.fakes.openai_server import FakeLLM
from tests.support.matrix_world import MatrixWorld
from tests.support.platform_matrix import Matrix

OWNER = Matrix.owner
MEGOLM = {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}
ANSWER_TIMEOUT = 30.0


def secret(body: str) -> dict[str, str]:
    """A plain `m.text` content; the person's client encrypts it."""
    return {"msgtype": "m.text", "body": body}


async def person(world: MatrixWorld, store: Path) -> Any:
    """The owner's matrix-nio client on a device of its own, its keys uploaded and its first sync done."""
    from nio import AsyncClient, AsyncClientConfig

    store.mkdir(mode=0o700)
    config = AsyncClientConfig(encryption_enabled=True, store_sync_tokens=False)
    client = AsyncClient(world.synapse.url, OWNER, store_path=str(store), config=config)
    await client.login(world.client(OWNER).user.password, device_name="the owner's phone")
    await client.sync(timeout=0)
    await key_chores(client)
    return client


async def until_joined(client: Any, room_id: str, bot: str) -> None:
    """Long-poll the person's syncs until their client knows the room is encrypted and the bot is in it."""
    deadline = time.monotonic() + ANSWER_TIMEOUT
    while not ((room := client.rooms.get(room_id)) and room.encrypted and bot in room.users):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{bot} never joined {room_id}")
        await client.sync(timeout=1000)
        await key_chores(client)


async def encrypted_dm(phone: Any, bot: str) -> str:
    """A megolm-encrypted direct room the person made with the bot, once the bot has joined it."""
    from nio import RoomPreset

    made = await phone.room_create(
        is_direct=True, invite=[bot], initial_state=[MEGOLM], preset=RoomPreset.trusted_private_chat
    )
    await until_joined(phone, made.room_id, bot)
    return str(made.room_id)


async def bot_says(client: Any, room_id: str, bot: str, kind: type | None = None) -> list[Any]:
    """Long-poll the person's syncs (their key chores after each) until the bot's decrypted messages arrive."""
    from nio import RoomMessageText

    kind = kind or RoomMessageText

    deadline = time.monotonic() + ANSWER_TIMEOUT
    while time.monotonic() < deadline:
        answer = await client.sync(timeout=1000)
        await key_chores(client)
        room = answer.rooms.join.get(room_id)
        said = [e for e in (room.timeline.events if room else []) if isinstance(e, kind) and e.sender == bot]
        if said:
            return said
    raise TimeoutError(f"no decrypted answer from {bot} in {room_id}")


async def test_an_encrypted_dm_is_answered_encrypted_before_and_after_a_restart_on_the_same_device(
    tmp_path: Path, fake_llm: FakeLLM, matrix_world: MatrixWorld
) -> None:
    world, front, bot = matrix_world, matrix_world.front, matrix_world.bot.user_id
    phone = await person(world, tmp_path / "phone")
    try:
        async with matrix_bot(tmp_path, fake_llm, world, encryption=True):
            room = await encrypted_dm(phone, bot)
            await phone.room_send(room, "m.room.message", secret("a secret question"), None, True)
            (said,) = await bot_says(phone, room, bot)
        await phone.room_send(room, "m.room.message", secret("sent while it was down"), None, True)
        async with matrix_bot(tmp_path, fake_llm, world, encryption=True):  # same device, keys from its store
            (said_later,) = await bot_says(phone, room, bot)
    finally:
        await phone.close()
    assert said.decrypted and said.body.endswith("a secret question")  # the fake model echoes the question
    assert said_later.decrypted and said_later.body.endswith("sent while it was down")
    assert "a secret question" in str(fake_llm.requests[0]["messages"])
    assert len(front.posted) == 2
    for posted in front.posted:  # ciphertext only on the wire
        assert posted.content["algorithm"] == "m.megolm.v1.aes-sha2" and "body" not in posted.content
    crypto = tmp_path / "state" / "matrix" / "crypto"
    assert stat.S_IMODE(crypto.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in crypto.iterdir())
    device = json.loads((tmp_path / "state" / "matrix" / "sync.json").read_text())["device_id"]
    assert device and any(device in path.name for path in crypto.iterdir())


async def test_encrypted_files_are_read_by_the_bot_and_sent_encrypted_by_it(
    tmp_path: Path, fake_llm: FakeLLM, matrix_world: MatrixWorld
) -> None:
    from nio import RoomEncryptedFile
    from nio.crypto.attachments import decrypt_attachment

    world, front, bot = matrix_world, matrix_world.front, matrix_world.bot.user_id
    notes, report = b"the launch code is 4217\n", tmp_path / "report.txt"
    report.write_bytes(b"all systems nominal\n")
    phone = await person(world, tmp_path / "phone")
    try:
        async with matrix_bot(tmp_path, fake_llm, world, encryption=True) as gateway:
            room = await encrypted_dm(phone, bot)
            uploaded, keys = await phone.upload(
                io.BytesIO(notes), "text/plain", "notes.txt", encrypt=True, filesize=len(notes)
            )
            sealed = {"msgtype": "m.file", "body": "notes.txt", "file": {**keys, "url": uploaded.content_uri}}
            await phone.room_send(room, "m.room.message", {**sealed, "info": {"mimetype": "text/plain"}}, None, True)
            await bot_says(phone, room, bot)
            outbound = OutboundMessage(ChatRef("matrix", room), "", files=(Attachment(str(report), "text/plain"),))
            await gateway.gateway.agent.bus.publish_outbound(outbound)
            (sent,) = await bot_says(phone, room, bot, RoomEncryptedFile)
            fetched = await phone.download(sent.url)
    finally:
        await phone.close()
    assert "the launch code is 4217" in user_texts(fake_llm)[0]  # decrypted before the model read it
    plain = decrypt_attachment(fetched.body, sent.key["k"], sent.hashes["sha256"], sent.iv)
    assert plain == report.read_bytes() and fetched.body != plain  # the media repository holds ciphertext only
    assert all(posted.content["algorithm"] == "m.megolm.v1.aes-sha2" for posted in front.posted)
