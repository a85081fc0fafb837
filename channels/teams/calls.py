"""Bot Connector calls through the Agents SDK's ConnectorClient, with aiohttp's failures translated into
relaybot's errors in this one place."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bot.errors import ChannelError, ChannelUnavailable, DeliveryAmbiguous, RateLimited
from channels.teams.credentials import BotCredentials

if TYPE_CHECKING:
    from microsoft_agents.hosting.core.connector.client import ConnectorClient

DEFAULT_WAIT = 1.0  # a 429 without Retry-After: the Connector's guidance is to back off a second or more


class Connector:
    """The Connector of each serviceUrl an activity came from, under the bot's token."""

    def __init__(self, credentials: BotCredentials) -> None:
        self._credentials = credentials
        self._clients: dict[str, ConnectorClient] = {}

    async def send(self, service_url: str, conversation_id: str, activity: dict[str, Any]) -> str:
        """POST an activity to the conversation; the new activity's id."""
        from microsoft_agents.activity import Activity

        client = await self._client(service_url)
        answer = await _translated(
            client.conversations.send_to_conversation(conversation_id, _model(Activity, activity))
        )
        return str(answer.id or "")

    async def update(self, service_url: str, conversation_id: str, activity_id: str, activity: dict[str, Any]) -> None:
        """PUT a new version of one of the bot's activities (a live reply growing, a card replaced)."""
        from microsoft_agents.activity import Activity

        client = await self._client(service_url)
        body = _model(Activity, {**activity, "id": activity_id})
        await _translated(client.conversations.update_activity(conversation_id, activity_id, body))

    async def delete(self, service_url: str, conversation_id: str, activity_id: str) -> None:
        """DELETE one of the bot's activities."""
        client = await self._client(service_url)
        await _translated(client.conversations.delete_activity(conversation_id, activity_id))

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()

    async def _client(self, service_url: str) -> ConnectorClient:
        """The client for `service_url`, its Authorization header renewed with the current token."""
        from microsoft_agents.hosting.core.connector.client import ConnectorClient

        token = await self._credentials.token()
        client = self._clients.get(service_url)
        if client is None:
            client = self._clients[service_url] = ConnectorClient(service_url, token)
        client.client.headers["Authorization"] = f"Bearer {token}"
        return client


def _model(activity_class: Any, activity: dict[str, Any]) -> Any:
    return activity_class.model_validate(activity)


async def _translated(call: Any) -> Any:
    """Await one SDK call; an HTTP error answer or a failed connection becomes the matching ChannelError."""
    import aiohttp

    try:
        return await call
    except aiohttp.ClientResponseError as exc:
        raise translate(exc.status, exc.message, exc.headers) from exc
    except TimeoutError as exc:
        raise DeliveryAmbiguous("timed out; Teams may have received it") from exc
    except aiohttp.ClientError as exc:
        raise ChannelUnavailable(f"{type(exc).__name__}: {exc}") from exc


def translate(status: int, body: str, headers: Any) -> ChannelError:
    """A Connector error answer (`{"error": {"code", "message"}}`) as the matching ChannelError."""
    try:
        error = json.loads(body).get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    code = str(error.get("code") or "") or None
    text = f"{error.get('message') or body or 'error'} (HTTP {status})"
    if status == 429:
        retry_after = (headers or {}).get("Retry-After")
        return RateLimited(float(retry_after) if retry_after else DEFAULT_WAIT, text)
    if status >= 500:
        return ChannelUnavailable(text)
    return ChannelError(text, code)
