"""One Slack Web API call, with slack_sdk's and aiohttp's failures translated into relaybot's errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from bot.errors import ChannelError, ChannelUnavailable, RateLimited

if TYPE_CHECKING:
    from slack_sdk.errors import SlackApiError

T = TypeVar("T")
TRANSIENT_ERRORS = frozenset({"internal_error", "service_unavailable", "request_timeout"})


async def call_slack(make: Callable[[], Awaitable[T]]) -> T:
    """Run one Web API call; Slack's error code becomes the ChannelError's message and its `code`."""
    import aiohttp
    from slack_sdk.errors import SlackApiError

    try:
        return await make()
    except SlackApiError as exc:
        raise _translate(exc) from exc
    except TimeoutError as exc:
        raise ChannelError("timed out; not retried, as Slack may have received it") from exc
    except aiohttp.ClientError as exc:
        raise ChannelUnavailable(f"{type(exc).__name__}: {exc}") from exc


def _translate(exc: SlackApiError) -> ChannelError:
    response = exc.response
    data = response.data if isinstance(response.data, dict) else {}
    error = data.get("error") or f"HTTP {response.status_code}"
    if response.status_code == 429 or error == "ratelimited":
        # Slack limits each method per workspace: every chat waits.
        return RateLimited(float(response.headers.get("Retry-After", 1)), whole_bot=True)
    if response.status_code >= 500 or error in TRANSIENT_ERRORS:
        return ChannelUnavailable(error, code=error)
    return ChannelError(error, code=error)
