"""One Bot API call with python-telegram-bot's errors translated into ours, in one place."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.errors import (
    ChannelError,
    ChannelUnavailable,
    ChatMoved,
    DeliveryAmbiguous,
    MarkupRejected,
    NothingToChange,
    RateLimited,
)

T = TypeVar("T")


async def call_bot_api(make: Callable[[], Awaitable[T]]) -> T:
    """Run one Bot API call, translating python-telegram-bot's errors into ours."""
    from telegram import error

    try:
        return await make()
    except error.RetryAfter as exc:
        wait = exc.retry_after
        raise RateLimited(wait.total_seconds() if hasattr(wait, "total_seconds") else float(wait)) from exc
    except error.ChatMigrated as exc:
        raise ChatMoved(str(exc.new_chat_id)) from exc
    except error.BadRequest as exc:
        raise _bad_request(exc.message) from exc
    except error.NetworkError as exc:
        if _request_was_written(exc):
            raise DeliveryAmbiguous(f"{exc.message}; Telegram may have received it") from exc
        raise ChannelUnavailable(exc.message) from exc
    except error.TelegramError as exc:
        raise ChannelError(exc.message) from exc


def _bad_request(message: str) -> ChannelError:
    """A 400 by its kind: the Bot API tells its kinds apart only in the description, so they are told apart here."""
    said = message.lower()
    if "can't parse entities" in said or "unsupported start tag" in said:
        return MarkupRejected(message)
    if "message is not modified" in said:
        return NothingToChange(message)
    return ChannelError(message)


def _request_was_written(exc: Exception) -> bool:
    """Whether the connection failed after the request went out (a read timeout or a dropped response)."""
    import aiohttp

    cause = exc.__cause__
    if isinstance(cause, aiohttp.ConnectionTimeoutError):
        return False
    written = aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | aiohttp.ServerTimeoutError
    return isinstance(cause, written | TimeoutError)
