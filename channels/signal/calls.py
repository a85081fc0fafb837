"""signal-cli's JSON-RPC over HTTP (`POST /api/v1/rpc`), its error codes and aiohttp's failures translated here."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from bot.errors import ChannelError, ChannelUnavailable, RateLimited

if TYPE_CHECKING:
    import aiohttp

USER_ERROR, IO_ERROR, RATE_LIMIT, INTERNAL = -1, -3, -5, -32603
DEFAULT_WAIT = 5.0  # a rate limit whose results name no retryAfterSeconds
TRANSIENT_RESULTS = frozenset({"NETWORK_FAILURE"})


class SignalRpc:
    """One account's calls to the daemon; every request names the account (needed in multi-account mode)."""

    def __init__(self, session: aiohttp.ClientSession, url: str, account: str) -> None:
        self._session = session
        self.url = url.rstrip("/")
        self.account = account
        self._ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> Any:
        """One JSON-RPC request; its `result`, or the matching ChannelError."""
        import aiohttp

        params = {**params, "account": self.account}
        request = {"jsonrpc": "2.0", "method": method, "params": params, "id": next(self._ids)}
        try:
            async with self._session.post(f"{self.url}/api/v1/rpc", json=request) as response:
                if response.status >= 500:
                    raise ChannelUnavailable(f"signal-cli answered HTTP {response.status}")
                if response.status != 200:
                    raise ChannelError(f"signal-cli answered HTTP {response.status}", code=str(response.status))
                answer = await response.json(content_type=None)
        except TimeoutError as exc:
            raise ChannelError("timed out; not retried, as signal-cli may have sent it") from exc
        except aiohttp.ClientError as exc:
            raise ChannelUnavailable(f"signal-cli is not reachable at {self.url}: {exc}") from exc
        if not isinstance(answer, dict):
            raise ChannelUnavailable("signal-cli answered something that is not JSON-RPC")
        if "error" in answer:
            raise translate(answer["error"] or {})
        return answer.get("result")


def translate(error: dict[str, Any]) -> ChannelError:
    """A JSON-RPC error as a ChannelError: -5 waits the longest `retryAfterSeconds`, network failures may pass."""
    code = int(error.get("code") or 0)
    data = error.get("data") or {}
    results = ((data.get("response") or {}).get("results") or []) if isinstance(data, dict) else []
    kinds = sorted({str(result.get("type")) for result in results if isinstance(result, dict)})
    text = f"{error.get('message') or 'signal-cli error'}" + (f" ({', '.join(kinds)})" if kinds else "")
    if code == RATE_LIMIT:
        waits = [float(r["retryAfterSeconds"]) for r in results if isinstance(r, dict) and r.get("retryAfterSeconds")]
        return RateLimited(max(waits, default=DEFAULT_WAIT), text)
    if code in (IO_ERROR, INTERNAL) or (kinds and set(kinds) <= TRANSIENT_RESULTS):
        return ChannelUnavailable(text, code=str(code))
    return ChannelError(text, code=str(code))
