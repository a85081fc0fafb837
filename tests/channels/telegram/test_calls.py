"""python-telegram-bot's errors become the bot's error tree in one place, a 400 by its kind."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.errors import ChannelError, MarkupRejected, NothingToChange, RateLimited
from channels.telegram.calls import call_bot_api


async def failing(exc: Exception) -> None:
    raise exc


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("Bad Request: message is not modified: specified new message content is the same", NothingToChange),
        ("Bad Request: can't parse entities: unsupported start tag", MarkupRejected),
        ("Bad Request: chat not found", ChannelError),
    ],
)
async def test_a_bad_request_is_told_apart_by_its_kind(said: str, kind: type[ChannelError]) -> None:
    from telegram.error import BadRequest

    with pytest.raises(ChannelError) as raised:
        await call_bot_api(lambda: failing(BadRequest(said)))
    assert type(raised.value) is kind and isinstance(raised.value.__cause__, BadRequest)


async def test_retry_after_becomes_rate_limited_with_its_wait() -> None:
    from telegram.error import RetryAfter

    with pytest.raises(RateLimited) as raised:
        await call_bot_api(lambda: failing(RetryAfter(timedelta(seconds=7))))
    assert raised.value.retry_after == 7.0
