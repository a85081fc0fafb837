"""matrix-nio's error responses become relaybot's errors in one place: 429 waits, 5xx passes, 4xx is final."""

import pytest
from nio import RoomSendError

from bot.errors import ChannelError, ChannelUnavailable, RateLimited
from channels.matrix.calls import call_matrix, translate


class Reply:
    def __init__(self, status: int) -> None:
        self.status = status


def error(status: int, errcode: str, retry_after_ms: int | None = None) -> RoomSendError:
    body: dict[str, object] = {"errcode": errcode, "error": "said so"}
    if retry_after_ms is not None:
        body["retry_after_ms"] = retry_after_ms
    answer = RoomSendError.from_dict(body, "!r:x")
    answer.transport_response = Reply(status)
    return answer


def test_a_rate_limit_waits_as_long_as_the_homeserver_asks() -> None:
    limited = translate(error(429, "M_LIMIT_EXCEEDED", 2500))
    assert isinstance(limited, RateLimited) and limited.retry_after == 2.5


def test_a_server_error_may_pass_and_a_refusal_is_final_with_its_errcode() -> None:
    down = translate(error(502, "M_UNKNOWN"))
    refused = translate(error(403, "M_FORBIDDEN"))
    assert isinstance(down, ChannelUnavailable)
    assert type(refused) is ChannelError and refused.code == "M_FORBIDDEN" and "M_FORBIDDEN" in str(refused)


async def test_an_error_response_nio_returns_is_raised() -> None:
    async def send() -> RoomSendError:
        return error(403, "M_FORBIDDEN")

    with pytest.raises(ChannelError, match="M_FORBIDDEN"):
        await call_matrix(send)
