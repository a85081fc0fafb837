"""Mattermost REST API v4 calls over aiohttp, its error answers and aiohttp's failures translated in this one place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.errors import ChannelError, ChannelUnavailable, RateLimited

if TYPE_CHECKING:
    import aiohttp

DEFAULT_WAIT = 1.0  # a 429 without Retry-After or X-RateLimit-Reset


class MattermostApi:
    """One bot account's REST API under its personal access token."""

    def __init__(self, session: aiohttp.ClientSession, url: str, token: str) -> None:
        self._session = session
        self.base = f"{url.rstrip('/')}/api/v4"
        self.auth = {"Authorization": f"Bearer {token}"}

    async def me(self) -> dict[str, Any]:
        """The bot's own user (`id`, `username`); proves the token."""
        return dict(await self.call("GET", "/users/me"))

    async def teams(self) -> list[dict[str, Any]]:
        """The teams the bot belongs to."""
        return list(await self.call("GET", "/users/me/teams"))

    async def create_post(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /posts: `channel_id`, `message`, and optionally `root_id`, `file_ids`, `props`; the new post."""
        return dict(await self.call("POST", "/posts", json=body))

    async def create_ephemeral(self, user_id: str, post: dict[str, Any]) -> None:
        """POST /posts/ephemeral: a post only `user_id` sees (needs the create_post_ephemeral permission)."""
        await self.call("POST", "/posts/ephemeral", json={"user_id": user_id, "post": post})

    async def patch_post(self, post_id: str, patch: dict[str, Any]) -> dict[str, Any]:
        """PUT /posts/{id}/patch: the fields given change, the others stay."""
        return dict(await self.call("PUT", f"/posts/{post_id}/patch", json=patch))

    async def delete_post(self, post_id: str) -> None:
        """DELETE /posts/{id}: one of the bot's posts goes."""
        await self.call("DELETE", f"/posts/{post_id}")

    async def posts_since(self, channel_id: str, since: int) -> dict[str, Any]:
        """GET /channels/{id}/posts?since=: the channel's posts made or changed after `since` (unix ms)."""
        return dict(await self.call("GET", f"/channels/{channel_id}/posts", params={"since": str(since)}))

    async def thread(self, root_id: str) -> dict[str, Any]:
        """GET /posts/{id}/thread: a thread's root and replies as `{"order", "posts"}`."""
        return dict(await self.call("GET", f"/posts/{root_id}/thread"))

    async def upload(self, channel_id: str, name: str, data: bytes, mime_type: str) -> str:
        """POST /files into `channel_id`; the file's id, for a post's `file_ids`."""
        import aiohttp

        form = aiohttp.FormData()
        form.add_field("channel_id", channel_id)
        form.add_field("files", data, filename=name, content_type=mime_type)
        answer = await self.call("POST", "/files", data=form)
        return str(answer["file_infos"][0]["id"])

    def file_url(self, file_id: str) -> str:
        """Where a file's bytes are downloaded (with the token)."""
        return f"{self.base}/files/{file_id}"

    async def add_reaction(self, user_id: str, post_id: str, emoji: str) -> None:
        """The bot's reaction `emoji` (a name such as `eyes`) on a post."""
        await self.call("POST", "/reactions", json={"user_id": user_id, "post_id": post_id, "emoji_name": emoji})

    async def remove_reaction(self, user_id: str, post_id: str, emoji: str) -> None:
        """The bot's reaction `emoji` taken off a post."""
        await self.call("DELETE", f"/users/{user_id}/posts/{post_id}/reactions/{emoji}")

    async def commands(self, team_id: str) -> list[dict[str, Any]]:
        """The team's custom slash commands."""
        return list(await self.call("GET", "/commands", params={"team_id": team_id, "custom_only": "true"}))

    async def add_command(self, body: dict[str, Any]) -> dict[str, Any]:
        """Register a custom slash command; the answer holds its `token`."""
        return dict(await self.call("POST", "/commands", json=body))

    async def delete_command(self, command_id: str) -> None:
        """A custom slash command unregistered."""
        await self.call("DELETE", f"/commands/{command_id}")

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request; an error answer becomes the matching ChannelError."""
        import aiohttp

        try:
            async with self._session.request(method, self.base + path, headers=self.auth, **kwargs) as response:
                try:
                    answer = await response.json(content_type=None)
                except ValueError:
                    answer = None
                if response.status < 400:
                    return answer
                raise translate(response.status, response.headers, answer)
        except TimeoutError as exc:
            raise ChannelError("timed out; not retried, as Mattermost may have received it") from exc
        except aiohttp.ClientError as exc:
            raise ChannelUnavailable(f"{type(exc).__name__}: {exc}") from exc


def translate(status: int, headers: Any, answer: Any) -> ChannelError:
    """An error answer (`{"id", "message", "status_code"}`, or the rate limiter's plain 429) as a ChannelError."""
    if status == 429:
        wait = headers.get("Retry-After") or headers.get("X-RateLimit-Reset")
        try:
            seconds = float(wait) if wait else DEFAULT_WAIT
        except ValueError:
            seconds = DEFAULT_WAIT
        return RateLimited(seconds, "Mattermost rate limit")
    error_id = answer.get("id") if isinstance(answer, dict) else None
    message = answer.get("message") if isinstance(answer, dict) else None
    text = f"{message or f'HTTP {status}'} ({error_id or status})"
    if status >= 500:
        return ChannelUnavailable(text, code=error_id)
    return ChannelError(text, code=error_id)
