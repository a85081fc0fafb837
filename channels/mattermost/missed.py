"""What a Mattermost chat was sent while the gateway was down, read at start from the REST API."""

from __future__ import annotations

import logging

from bot.errors import ChannelError
from channels.catchup import CATCH_UP_LIMIT, ActiveChat
from channels.mattermost.calls import MattermostApi
from channels.mattermost.parse import DIRECT, missed_events
from channels.mattermost.websocket import OnEvent

logger = logging.getLogger(__name__)


async def read_missed(api: MattermostApi, active: ActiveChat, handle: OnEvent, limit: int = CATCH_UP_LIMIT) -> int:
    """Hand on, oldest first, up to `limit` posts made in the chat (a DM, or one of the bot's threads) after the last
    one seen (`last_id` holds its time, unix ms); how many."""
    chat = active.chat
    if not active.last_id.isdigit():
        return 0
    since = int(active.last_id)
    try:
        if chat.thread_id:
            events = missed_events(await api.thread(chat.thread_id), since, "O")
        else:
            events = missed_events(await api.posts_since(chat.chat_id, since), since, DIRECT)
    except ChannelError as exc:
        logger.warning("[%s] catch-up failed: %s", chat.session_key, exc)
        return 0
    events = events[-limit:]
    if events:
        logger.info("[%s] catching up on %d post(s)", chat.session_key, len(events))
    for event in events:
        await handle(event)
    return len(events)
