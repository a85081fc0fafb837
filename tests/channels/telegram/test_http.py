"""python-telegram-bot on the aiohttp transport: a dropped answer is ambiguous, a refused connection is not."""

from __future__ import annotations

import asyncio
import socket
import ssl

import pytest

from bot.errors import ChannelUnavailable, DeliveryAmbiguous
from channels.telegram.calls import call_bot_api
from channels.telegram.http import AiohttpRequest
from tests.fakes.http_proxy import ForwardingProxy
from tests.fakes.telegram_server import FakeTelegram


async def test_a_connection_dropped_after_the_request_went_out_is_ambiguous() -> None:
    async def read_then_drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    server = await asyncio.start_server(read_then_drop, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    request = AiohttpRequest(1, ssl.create_default_context())
    await request.initialize()
    try:
        with pytest.raises(DeliveryAmbiguous):
            await call_bot_api(lambda: request.post(f"http://127.0.0.1:{port}/botTOKEN/sendMessage"))
    finally:
        await request.shutdown()
        server.close()
        await server.wait_closed()


async def test_a_refused_connection_is_unavailable_not_ambiguous() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    request = AiohttpRequest(1, ssl.create_default_context())
    await request.initialize()
    try:
        with pytest.raises(ChannelUnavailable) as refused:
            await call_bot_api(lambda: request.post(f"http://127.0.0.1:{port}/botTOKEN/sendMessage"))
        assert not isinstance(refused.value, DeliveryAmbiguous)
    finally:
        await request.shutdown()


async def test_calls_go_through_the_http_proxy_the_environment_names(
    telegram: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with ForwardingProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        request = AiohttpRequest(1, ssl.create_default_context())
        await request.initialize()
        try:
            me = await request.post(f"{telegram.base_url}{telegram.token}/getMe")
        finally:
            await request.shutdown()
    assert me["username"] == telegram.bot_username
    assert proxy.seen == [f"POST {telegram.base_url}{telegram.token}/getMe"]


async def test_raw_calls_send_plain_fields_as_given_and_telegram_objects_as_the_library_converts_them(
    telegram: FakeTelegram,
) -> None:
    from telegram import InlineKeyboardButton, InlineKeyboardMarkup

    from channels.telegram.http import RawBotApi

    request = AiohttpRequest(1, ssl.create_default_context())
    await request.initialize()
    api = RawBotApi(request, f"{telegram.base_url}{telegram.token}")
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Yes", callback_data="p:1")]])
    try:
        plain = await api("sendMessage", {"chat_id": 42, "text": "<b>hi</b>", "parse_mode": "HTML", "quote": None})
        converted = await api("sendMessage", {"chat_id": 42, "text": "pick", "reply_markup": keyboard})
    finally:
        await request.shutdown()
    sent = [fields for method, fields in telegram.calls if method == "sendMessage"]
    assert sent[0] == {"chat_id": 42, "text": "<b>hi</b>", "parse_mode": "HTML"}
    assert sent[1]["reply_markup"] == {"inline_keyboard": [[{"text": "Yes", "callback_data": "p:1"}]]}
    assert plain["text"] == "hi" and converted["message_id"] > plain["message_id"]
