"""One Matrix client-server call, with matrix-nio's error responses and aiohttp's failures translated into ours."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bot.errors import ChannelError, ChannelUnavailable, DeliveryAmbiguous, RateLimited

T = TypeVar("T")


async def call_matrix(make: Callable[[], Awaitable[T]]) -> T:
    """Run one nio call; an ErrorResponse (nio returns, never raises, them) becomes a ChannelError with its errcode."""
    import aiohttp
    from nio import ErrorResponse

    try:
        answer = await make()
    except TimeoutError as exc:
        raise DeliveryAmbiguous("timed out; the homeserver may have received it") from exc
    except aiohttp.ServerDisconnectedError as exc:
        raise DeliveryAmbiguous(f"{type(exc).__name__}; the homeserver may have received it") from exc
    except aiohttp.ClientError as exc:
        raise ChannelUnavailable(f"{type(exc).__name__}: {exc}") from exc
    if isinstance(answer, tuple):  # upload answers (response, decryption keys)
        first: Any = answer[0]
        if isinstance(first, ErrorResponse):
            raise translate(first)
    if isinstance(answer, ErrorResponse):
        raise translate(answer)
    return answer


def translate(error: Any) -> ChannelError:
    """A nio ErrorResponse as our error: 429 / M_LIMIT_EXCEEDED waits `retry_after_ms`, 5xx may pass, 4xx is final."""
    status = _http_status(error)
    code = error.status_code if isinstance(error.status_code, str) else None
    reason = f"{code or f'HTTP {status}'}: {error.message}" if error.message else (code or f"HTTP {status}")
    if status == 429 or code == "M_LIMIT_EXCEEDED":
        wait = (error.retry_after_ms or 1000) / 1000
        return RateLimited(wait, f"homeserver rate limit ({reason})")
    if status is not None and status >= 500:
        return ChannelUnavailable(reason, code=code)
    return ChannelError(reason, code=code)


def _http_status(error: Any) -> int | None:
    response = getattr(error, "transport_response", None)
    return int(response.status) if response is not None else None
