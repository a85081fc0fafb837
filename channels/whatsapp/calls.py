"""Graph API calls over aiohttp, with its error codes and aiohttp's failures translated into relaybot's errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.errors import ChannelError, ChannelUnavailable, RateLimited, WindowClosed

if TYPE_CHECKING:
    import aiohttp

THROTTLED = frozenset({4, 80007, 130429, 131048, 131056})
"""Graph error codes that mean "slow down": app, account, per-pair and spam-rate limits."""
TRANSIENT = frozenset({1, 2, 131000, 131016})
"""Unknown and service-unavailable errors, worth a retry."""
OUTSIDE_WINDOW = 131047
THROTTLE_WAIT = 5.0  # the Graph API sends no Retry-After; Meta advises backing off for seconds


class GraphApi:
    """One phone number's Graph API: JSON calls, uploads and media downloads under its access token."""

    def __init__(self, session: aiohttp.ClientSession, api_base: str, phone_number_id: str, token: str) -> None:
        self._session = session
        self.base = api_base.rstrip("/")
        self.phone_number_id = phone_number_id
        self.auth = {"Authorization": f"Bearer {token}"}

    async def phone_number(self) -> dict[str, Any]:
        """The number's own record (display number, verified name); proves the token and the id."""
        return await self.call("GET", f"{self.base}/{self.phone_number_id}")

    async def message(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST /{phone_number_id}/messages with `messaging_product` filled in."""
        body = {"messaging_product": "whatsapp", **payload}
        return await self.call("POST", f"{self.base}/{self.phone_number_id}/messages", json=body)

    async def upload(self, data: bytes, filename: str, mime_type: str) -> str:
        """Upload a file to the media store; its id, valid 30 days."""
        import aiohttp

        form = aiohttp.FormData()
        form.add_field("messaging_product", "whatsapp")
        form.add_field("type", mime_type)
        form.add_field("file", data, filename=filename, content_type=mime_type)
        answer = await self.call("POST", f"{self.base}/{self.phone_number_id}/media", data=form)
        return str(answer["id"])

    async def media_url(self, media_id: str) -> dict[str, Any]:
        """GET /{media_id}: the short-lived download `url`, `mime_type`, `file_size`."""
        return await self.call("GET", f"{self.base}/{media_id}")

    async def call(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        """One request; a Graph error becomes the matching ChannelError."""
        import aiohttp

        try:
            async with self._session.request(method, url, headers=self.auth, **kwargs) as response:
                try:
                    answer = await response.json(content_type=None)
                except ValueError:
                    answer = None
                if response.status < 400 and isinstance(answer, dict):
                    return answer
                raise translate(response.status, answer)
        except TimeoutError as exc:
            raise ChannelError("timed out; not retried, as WhatsApp may have received it") from exc
        except aiohttp.ClientError as exc:
            raise ChannelUnavailable(f"{type(exc).__name__}: {exc}") from exc


def translate(status: int, answer: Any) -> ChannelError:
    """A Graph API error answer (`{"error": {"message", "code", …}}`) as the matching ChannelError."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return ChannelUnavailable(f"HTTP {status}") if status >= 500 else ChannelError(f"HTTP {status}")
    code = int(error.get("code") or 0)
    text = f"{error.get('message') or 'error'} (code {code})"
    if status == 429 or code in THROTTLED:
        return RateLimited(THROTTLE_WAIT, text, whole_bot=code in (4, 130429))
    if code == OUTSIDE_WINDOW:
        return WindowClosed(text)
    if status >= 500 or code in TRANSIENT:
        return ChannelUnavailable(text)
    return ChannelError(text)
