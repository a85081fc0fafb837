"""python-telegram-bot's HTTP transport on aiohttp: the same Bot API calls for a fraction of httpx's CPU."""

from __future__ import annotations

import functools
import ssl
from typing import Any

import aiohttp
from telegram._utils.defaultvalue import DefaultValue
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData
from telegram.request._requestparameter import RequestParameter  # stable across 22.x, the pinned range

from bot.net.proxy import ProxyBook
from bot.storage.compact_json import dumps

WRITE_TIMEOUT = 5.0
MEDIA_WRITE_TIMEOUT = 20.0


class AiohttpRequest(BaseRequest):
    """A BaseRequest over one pooled aiohttp session; errors raised as python-telegram-bot's own."""

    def __init__(self, connections: int, tls: ssl.SSLContext, read_timeout: float = 5.0) -> None:
        self._connections = connections
        self._tls = tls
        self._read_timeout = read_timeout
        self._session: aiohttp.ClientSession | None = None
        self._proxy = ProxyBook()

    @property
    def read_timeout(self) -> float:
        """The read timeout of a call that names none."""
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._connections, ssl=self._tls)
            # HTTPS_PROXY and friends apply, as they did with httpx; read once per host (see ProxyBook).
            self._session = aiohttp.ClientSession(connector=connector)

    async def shutdown(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """One HTTP request; (status, body)."""
        if self._session is None:
            raise RuntimeError("AiohttpRequest is not initialized")
        files = request_data.multipart_data if request_data and request_data.contains_files else None
        read = self._read_timeout if isinstance(read_timeout, DefaultValue) else read_timeout
        write = _given(write_timeout, MEDIA_WRITE_TIMEOUT if files else WRITE_TIMEOUT)
        connect = _given(connect_timeout, 5.0)
        timeout = _timeout(connect, max(read or 0, write or 0) or None)
        headers = {"User-Agent": self.USER_AGENT}
        data: Any = None
        if files and request_data:
            data = _multipart(request_data, files)
        elif request_data:
            data = dumps(request_data.parameters).encode()
            headers["Content-Type"] = "application/json"
        try:
            request = self._session.request(
                method, url, data=data, headers=headers, timeout=timeout, proxy=self._proxy(url)
            )
            async with request as response:
                return response.status, await response.read()
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise TimedOut from exc
        except aiohttp.ClientError as exc:
            raise NetworkError(f"aiohttp.{exc.__class__.__name__}: {exc}") from exc


_PLAIN_JSON = frozenset({str, int, float, bool, list, dict})


class RawBotApi:
    """Bot API methods on the hot path as raw JSON through python-telegram-bot's own request and error handling:
    no Update or Message objects built only to be read back as dicts."""

    def __init__(self, request: BaseRequest, bot_url: str) -> None:
        self._request = request
        self._url = bot_url

    async def __call__(self, method: str, fields: dict[str, Any], read_timeout: Any = BaseRequest.DEFAULT_NONE) -> Any:
        """Call `method` with the given fields (None ones left out); the result as JSON."""
        data = RequestData([_parameter(name, value) for name, value in fields.items() if value is not None])
        return await self._request.post(f"{self._url}/{method}", data, read_timeout=read_timeout)

    async def updates(self, offset: int | None, timeout: int, kinds: list[str]) -> list[dict[str, Any]]:
        """One getUpdates long poll: as python-telegram-bot's get_updates, its timeout on top of the read timeout."""
        fields = {"timeout": timeout, "allowed_updates": kinds, "offset": offset}
        result = await self("getUpdates", fields, read_timeout=(self._request.read_timeout or 0) + timeout)
        return result if isinstance(result, list) else []


def _parameter(name: str, value: Any) -> RequestParameter:
    """A field as a request parameter: plain JSON as given, Telegram objects and files as the library converts them."""
    if type(value) in _PLAIN_JSON:
        return RequestParameter(name, value, None)
    return RequestParameter.from_input(name, value)


@functools.lru_cache(maxsize=16)
def _timeout(connect: float | None, read: float | None) -> aiohttp.ClientTimeout:
    """The timeouts of a call (a frozen value; the few combinations the calls use are made once)."""
    return aiohttp.ClientTimeout(sock_connect=connect, sock_read=read)


def _given(value: Any, default: float) -> float | None:
    """A timeout the call named, else `default`."""
    return default if isinstance(value, DefaultValue) else value


def _multipart(request_data: RequestData, files: dict[str, tuple[str, Any, str]]) -> aiohttp.FormData:
    """The call's fields as a form, with its files as multipart parts."""
    form = aiohttp.FormData()
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, (filename, content, mime) in files.items():
        form.add_field(name, content, filename=filename, content_type=mime)
    return form
