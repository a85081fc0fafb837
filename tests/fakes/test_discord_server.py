"""The fake Discord, driven by the real discord.py."""

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import discord
import pytest
import pytest_asyncio
import yarl

from tests.fakes.discord_server import FakeDiscord


class Client:
    """A discord.py Client on the fake that queues every message it receives."""

    def __init__(self, fake: FakeDiscord, message_content: bool = True) -> None:
        discord.http.Route.BASE = fake.api_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
        intents = discord.Intents.none()
        intents.guilds = intents.guild_messages = intents.dm_messages = True
        intents.message_content = message_content
        self.fake = fake
        self.client = discord.Client(intents=intents)
        self.messages: asyncio.Queue[discord.Message] = asyncio.Queue()
        self.connected = asyncio.Event()
        self.client.on_connect = self._on_connect
        self.client.on_message = self.messages.put
        self._task: asyncio.Task[None] | None = None

    async def _on_connect(self) -> None:
        self.connected.set()

    async def __aenter__(self) -> "Client":
        await self.client.login(self.fake.token)
        self._task = asyncio.create_task(self.client.connect())
        await asyncio.wait_for(self.connected.wait(), 5)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.close()
        await asyncio.gather(self._task, return_exceptions=True)

    async def next_from_user(self) -> discord.Message:
        """The next message not written by the bot (the fake echoes the bot's own messages, as Discord does)."""
        while (message := await asyncio.wait_for(self.messages.get(), 5)).author.id == self.fake.bot_id:
            pass
        return message


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield server


@pytest_asyncio.fixture
async def client(fake: FakeDiscord) -> AsyncIterator[Client]:
    async with Client(fake) as connected:
        yield connected


async def test_rest_answers_are_bare_application_json(fake: FakeDiscord) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{fake.api_base}/users/@me", headers={"Authorization": f"Bot {fake.token}"}) as ok:
            assert ok.headers["Content-Type"] == "application/json" and (await ok.json())["bot"] is True
        async with session.get(f"{fake.api_base}/users/@me", headers={"Authorization": "Bot nope"}) as refused:
            assert refused.status == 401 and (await refused.json())["message"] == "401: Unauthorized"


async def test_a_429_has_discords_body_and_headers(fake: FakeDiscord) -> None:
    fake.fail("send_message", status=429, retry_after=0.5)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bot {fake.token}"}) as session:
        url = f"{fake.api_base}/channels/{fake.channel_id}/messages"
        async with session.post(url, json={"content": "x"}) as answer:
            body, headers = await answer.json(), answer.headers
    assert answer.status == 429
    assert body == {"message": "You are being rate limited.", "retry_after": 0.5, "global": False}
    assert headers["Retry-After"] == "1" and headers["X-RateLimit-Remaining"] == "0" and "Via" in headers


async def test_dm_guild_and_thread_messages_arrive_as_discord_sends_them(client: Client, fake: FakeDiscord) -> None:
    fake.dm("in private", user_id=42)
    dm = await client.next_from_user()
    assert isinstance(dm.channel, discord.DMChannel) and dm.guild is None and dm.content == "in private"
    fake.guild_message("in public", mention_bot=True)
    public = await client.next_from_user()
    assert isinstance(public.channel, discord.TextChannel) and public.guild.id == fake.guild_id
    assert public.content == f"<@{fake.bot_id}> in public" and [u.id for u in public.mentions] == [fake.bot_id]
    fake.thread_message("in a thread", thread_id=5100)
    threaded = await client.next_from_user()
    assert isinstance(threaded.channel, discord.Thread) and threaded.channel.parent_id == fake.channel_id


async def test_replies_resolve_the_message_they_answer(client: Client, fake: FakeDiscord) -> None:
    channel = client.client.get_partial_messageable(fake.channel_id)
    fake.guild_message("question")
    question = await client.next_from_user()
    answer = await channel.send("answer", reference=question)
    assert answer.reference.message_id == question.id and fake.sent[0]["message_reference"]["message_id"] == question.id
    fake.guild_message("follow-up", reply_to={"id": str(answer.id)})
    follow_up = await client.next_from_user()
    assert follow_up.reference.resolved.author.id == fake.bot_id


async def test_text_over_2000_characters_is_refused_like_discord(client: Client, fake: FakeDiscord) -> None:
    channel = client.client.get_partial_messageable(fake.channel_id)
    with pytest.raises(discord.HTTPException) as refused:
        await channel.send("x" * 2001)
    assert (refused.value.status, refused.value.code) == (400, 50035)
    await channel.send("x" * 2000)
    assert len(fake.sent) == 1


async def test_the_same_nonce_creates_one_message(client: Client, fake: FakeDiscord) -> None:
    channel = client.client.get_partial_messageable(fake.channel_id)
    first = await channel.send("once", nonce="n-1")
    again = await channel.send("once", nonce="n-1")
    assert first.id == again.id and len(fake.sent) == 1


async def test_without_the_content_intent_guild_text_is_blank_unless_mentioned(fake: FakeDiscord) -> None:
    async with Client(fake, message_content=False) as client:
        fake.guild_message("secret")
        fake.guild_message("for you", mention_bot=True)
        fake.dm("private")
        contents = [(await client.next_from_user()).content for _ in range(3)]
    assert contents == ["", f"<@{fake.bot_id}> for you", "private"]


@pytest.mark.parametrize("interruption", ["reconnect", "drop"])
async def test_a_resume_replays_what_was_missed_in_order(client: Client, fake: FakeDiscord, interruption: str) -> None:
    getattr(fake, interruption)()
    fake.dm("one")
    fake.dm("two")
    (resume,) = await fake.wait_for_op(6)
    assert [(await client.next_from_user()).content for _ in range(2)] == ["one", "two"]
    assert resume["d"]["seq"] == 2  # READY and GUILD_CREATE were seen before the interruption
    assert [frame["op"] for frame in fake.received].count(2) == 1


async def test_attachments_typing_and_unknown_channels(client: Client, fake: FakeDiscord) -> None:
    fake.dm("see file", attachments=[fake.attachment("a.txt", b"hello", "text/plain")])
    message = await client.next_from_user()
    assert await message.attachments[0].read() == b"hello"
    await message.channel.typing()
    assert fake.typing == [message.channel.id]
    with pytest.raises(discord.NotFound) as missing:
        await client.client.get_partial_messageable(1).send("anyone?")
    assert missing.value.code == 10003


async def test_a_disallowed_intent_closes_the_gateway_with_4014(fake: FakeDiscord) -> None:
    fake.message_content_allowed = False
    client = Client(fake).client
    await client.login(fake.token)
    try:
        with pytest.raises(discord.PrivilegedIntentsRequired):
            await asyncio.wait_for(client.connect(), 5)
    finally:
        await client.close()
