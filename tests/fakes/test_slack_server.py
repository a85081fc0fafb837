"""The fake Slack, driven by the real slack_sdk Web API and Socket Mode clients."""

import asyncio
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_server import TEXT_LIMIT, FakeSlack


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        yield server


def web(fake: FakeSlack, token: str | None = None) -> AsyncWebClient:
    return AsyncWebClient(token=token or fake.bot_token, base_url=fake.base_url, retry_handlers=[])


class Listener:
    """A Socket Mode client that records every request and acks unless told not to."""

    def __init__(self, fake: FakeSlack, ack: bool = True) -> None:
        self.client = SocketModeClient(fake.app_token, web_client=web(fake), ping_interval=0.2)
        self.requests: asyncio.Queue[SocketModeRequest] = asyncio.Queue()
        self.ack = ack
        self.client.socket_mode_request_listeners.append(self._on_request)

    async def _on_request(self, client: SocketModeClient, request: SocketModeRequest) -> None:
        if self.ack:
            await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        await self.requests.put(request)

    async def next(self) -> SocketModeRequest:
        return await asyncio.wait_for(self.requests.get(), 5)


@pytest_asyncio.fixture
async def listener(fake: FakeSlack) -> AsyncIterator[Listener]:
    listening = Listener(fake)
    await listening.client.connect()
    yield listening
    await listening.client.close()


async def test_auth_test_and_token_types(fake: FakeSlack) -> None:
    identity = await web(fake).auth_test()
    assert (identity["user_id"], identity["bot_id"], identity["team_id"]) == ("UBOT", "BBOT", "T0001")
    with pytest.raises(SlackApiError) as refused:
        await web(fake, "xoxb-wrong").auth_test()
    assert refused.value.response["error"] == "invalid_auth"
    with pytest.raises(SlackApiError) as wrong_type:
        await web(fake).apps_connections_open(app_token=fake.bot_token)
    assert wrong_type.value.response["error"] == "not_allowed_token_type"


async def test_post_message_is_recorded_limited_and_echoed(fake: FakeSlack, listener: Listener) -> None:
    answer = await web(fake).chat_postMessage(channel="C1", text="hello", thread_ts="1.0")
    assert fake.posted == [{"channel": "C1", "text": "hello", "thread_ts": "1.0", "ts": answer["ts"]}]
    echo = (await listener.next()).payload["event"]
    assert (echo["bot_id"], echo["user"], echo["thread_ts"], echo["ts"]) == ("BBOT", "UBOT", "1.0", answer["ts"])
    with pytest.raises(SlackApiError) as too_long:
        await web(fake).chat_postMessage(channel="C1", text="x" * (TEXT_LIMIT + 1))
    assert too_long.value.response["error"] == "msg_too_long"


async def test_injected_failures(fake: FakeSlack) -> None:
    fake.fail("chat.postMessage", status=429, retry_after=7)
    fake.fail("chat.postMessage", status=502)
    with pytest.raises(SlackApiError) as limited:
        await web(fake).chat_postMessage(channel="C1", text="a")
    assert limited.value.response.status_code == 429 and limited.value.response.headers["Retry-After"] == "7"
    assert limited.value.response["error"] == "ratelimited"
    with pytest.raises(SlackApiError) as unavailable:
        await web(fake).chat_postMessage(channel="C1", text="a")
    assert unavailable.value.response.status_code == 502
    fake.fail("chat.postMessage", status=0)
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await web(fake).chat_postMessage(channel="C1", text="a")
    await web(fake).chat_postMessage(channel="C1", text="a")
    assert len(fake.posted) == 1


async def test_events_arrive_in_envelopes_and_acks_are_recorded(fake: FakeSlack, listener: Listener) -> None:
    fake.channel_message("hi", channel="C9", mention=True, thread_ts="3.0")
    mention, message = await listener.next(), await listener.next()
    assert (mention.type, mention.retry_attempt) == ("events_api", 0)
    assert mention.payload["event"]["type"] == "app_mention" and message.payload["event"]["type"] == "message"
    assert mention.payload["event_id"] != message.payload["event_id"]
    assert mention.payload["event"]["ts"] == message.payload["event"]["ts"]
    assert message.payload["event"]["text"] == "<@UBOT> hi" and message.payload["event"]["thread_ts"] == "3.0"
    await fake.wait_for_acks(2)
    assert fake.acks == [mention.envelope_id, message.envelope_id]


async def test_redelivery_and_unacked_retries(fake: FakeSlack) -> None:
    listening = Listener(fake, ack=False)
    await listening.client.connect()
    try:
        event = fake.dm("again")
        first = await listening.next()
        fake.redeliver(event)
        retry = await listening.next()
        assert retry.payload["event_id"] == first.payload["event_id"] and retry.retry_attempt == 1
        assert await fake.retry_unacked() == 2
        assert {(await listening.next()).retry_attempt for _ in range(2)} == {1, 2}
    finally:
        await listening.client.close()


async def test_refresh_and_drops_make_the_client_reconnect(fake: FakeSlack, listener: Listener) -> None:
    await fake.refresh()
    fake.dm("queued meanwhile")
    await fake.wait_for_connections(2)
    assert (await listener.next()).payload["event"]["text"] == "queued meanwhile"
    await fake.drop()
    await fake.wait_for_connections(3)
    await fake.drop(abrupt=True)
    await fake.wait_for_connections(4)
    assert [method for method, _ in fake.calls].count("apps.connections.open") == 4


async def test_hello_comes_first_on_every_connection(fake: FakeSlack) -> None:
    async with aiohttp.ClientSession() as session:
        url = (await web(fake).apps_connections_open(app_token=fake.app_token))["url"]
        async with session.ws_connect(url) as socket:
            assert json.loads((await socket.receive()).data)["type"] == "hello"


async def test_files_need_the_bot_token(fake: FakeSlack) -> None:
    file = fake.add_file(b"\x89PNG", "a.png", "image/png")
    async with aiohttp.ClientSession() as session:
        async with session.get(file["url_private"], headers={"Authorization": f"Bearer {fake.bot_token}"}) as ok:
            assert (ok.status, ok.content_type, await ok.read()) == (200, "image/png", b"\x89PNG")
        async with session.get(file["url_private"]) as anonymous:
            assert anonymous.status == 403


async def test_presses_and_commands_arrive_in_their_own_envelopes(fake: FakeSlack, listener: Listener) -> None:
    blocks = [
        {
            "type": "actions",
            "block_id": "b1",
            "elements": [{"type": "button", "action_id": "go", "text": {"type": "plain_text", "text": "Go"}}],
        }
    ]
    answer = await web(fake).chat_postMessage(channel="C1", text="pick", blocks=blocks)
    await listener.next()  # the echo of the post
    fake.press({"channel": "C1", "ts": answer["ts"]}, "Go", user="U7")
    press = await listener.next()
    assert (press.type, press.accepts_response_payload) == ("interactive", True)
    assert press.payload["actions"][0]["block_id"] == "b1" and press.payload["container"]["message_ts"] == answer["ts"]
    fake.slash_command("/new", "now", user="U7")
    command = await listener.next()
    assert command.type == "slash_commands" and (command.payload["command"], command.payload["text"]) == ("/new", "now")
    await fake.wait_for_acks(3)
    assert all(envelope.ack_delay is not None for envelope in fake.envelopes_of("interactive"))


async def test_reactions_ephemeral_notices_and_status(fake: FakeSlack) -> None:
    client = web(fake)
    await client.reactions_add(channel="C1", timestamp="1.0", name="eyes")
    with pytest.raises(SlackApiError) as twice:
        await client.reactions_add(channel="C1", timestamp="1.0", name="eyes")
    assert twice.value.response["error"] == "already_reacted"
    await client.reactions_remove(channel="C1", timestamp="1.0", name="eyes")
    assert fake.reactions[("C1", "1.0")] == []
    await client.chat_postEphemeral(channel="C1", user="U7", text="psst")
    assert fake.ephemeral[0]["user"] == "U7" and fake.posted == []
    await client.assistant_threads_setStatus(channel_id="C1", thread_ts="1.0", status="is thinking…")
    fake.scopes = set()
    with pytest.raises(SlackApiError) as refused:
        await client.assistant_threads_setStatus(channel_id="C1", thread_ts="1.0", status="is thinking…")
    assert refused.value.response["error"] == "missing_scope" and len(fake.statuses) == 1
