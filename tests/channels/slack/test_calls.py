"""slack_sdk's errors become the bot's error tree in one place, carrying Slack's error code."""

from __future__ import annotations

from typing import Any

import pytest

from bot.errors import ChannelError, ChannelUnavailable, RateLimited
from channels.slack.calls import call_slack


def refusal(error: str, status: int = 200, headers: dict[str, Any] | None = None) -> Exception:
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_slack_response import AsyncSlackResponse

    response = AsyncSlackResponse(
        client=None,
        http_verb="POST",
        api_url="https://slack.test/api/reactions.add",
        req_args={},
        data={"ok": False, "error": error},
        headers=headers or {},
        status_code=status,
    )
    return SlackApiError(error, response)


async def failing(exc: Exception) -> None:
    raise exc


async def test_a_refusal_carries_slacks_error_code() -> None:
    with pytest.raises(ChannelError) as raised:
        await call_slack(lambda: failing(refusal("already_reacted")))
    assert type(raised.value) is ChannelError and raised.value.code == "already_reacted"


async def test_a_transient_code_is_unavailable_and_keeps_its_code() -> None:
    with pytest.raises(ChannelUnavailable) as raised:
        await call_slack(lambda: failing(refusal("service_unavailable")))
    assert raised.value.code == "service_unavailable"


async def test_ratelimited_waits_for_the_whole_workspace() -> None:
    with pytest.raises(RateLimited) as raised:
        await call_slack(lambda: failing(refusal("ratelimited", 429, {"Retry-After": "3"})))
    assert raised.value.retry_after == 3.0 and raised.value.whole_bot
