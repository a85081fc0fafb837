"""Delivering an OutboundMessage on Slack: chunks with buttons under the last, edits in place, private notices."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bot.bus import OutboundMessage
from bot.errors import ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from channels.delivery import send_in_chunks
from channels.formatting import markdown_to_slack_mrkdwn
from channels.prompt_messages import PromptMessages
from channels.sent_replies import SentReplies
from channels.slack.buttons import SECTION_LIMIT, choice_blocks
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 3900  # Slack accepts 40,000 but advises at most 4,000 characters per message
REPLIES_KEPT = 2048  # Slack's replies are kept longer: a channel's threads run many answers at once


def split_id(platform_id: str) -> tuple[str, str]:
    """`channel:ts` as (channel, ts)."""
    channel, _, ts = platform_id.rpartition(":")
    return channel, ts


class SlackSender:
    """Sends one channel's outbound messages and remembers which bot messages answered which user message."""

    def __init__(self, client: Any, call: PlatformCall, retry: RetryPolicy) -> None:
        self._client = client
        self._call = call
        self._retry = retry
        self._replies: SentReplies[str] = SentReplies(REPLIES_KEPT)
        self._prompts = PromptMessages()

    def remember_reply(self, user_message: str, bot_message: str) -> None:
        """Note that `bot_message` (`channel:ts`) is part of the reply to `user_message`; the oldest are forgotten."""
        self._replies.add(user_message, bot_message)

    async def send(self, message: OutboundMessage) -> None:
        """Privately, in place of an earlier message, as an upload, or as new messages, in that order of preference."""
        message = self._prompts.resolve(message)
        if message.private_to and await self._post_ephemeral(message, message.private_to):
            return
        targets = self._targets_of(message)
        if targets and await self._replace(targets, message):
            return
        if message.files:
            await self._upload(message)
            return
        await self._post(message)

    def _targets_of(self, message: OutboundMessage) -> list[str]:
        if message.edit_of:
            return [message.edit_of]
        if message.revises_reply_to:
            return self._replies.of(message.revises_reply_to)
        return []

    async def _replace(self, targets: list[str], message: OutboundMessage) -> bool:
        """chat.update the first target (buttons removed or replaced), delete the rest; False: send anew."""
        text = markdown_to_slack_mrkdwn(message.text)
        if len(text) > MAX_MESSAGE_LENGTH or (message.choices and len(text) > SECTION_LIMIT) or not text.strip():
            return False
        channel, ts = split_id(targets[0])
        blocks = choice_blocks(text, message.choices, message.prompt_id) if message.choices else []
        try:
            await self._call(lambda: self._client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks))
        except ChannelUnavailable:
            raise
        except ChannelError as exc:
            logger.info("[%s] could not edit %s (%s); sending anew", message.chat.session_key, targets[0], exc)
            return False
        for extra in targets[1:]:
            extra_channel, extra_ts = split_id(extra)
            try:
                await self._call(partial(self._client.chat_delete, channel=extra_channel, ts=extra_ts))
            except ChannelUnavailable:
                raise
            except ChannelError as exc:
                logger.info("[%s] could not delete %s: %s", message.chat.session_key, extra, exc)
        if message.revises_reply_to:
            self._replies.replace(message.revises_reply_to, targets[:1])
        return True

    async def _post(self, message: OutboundMessage) -> None:
        chat = message.chat
        rendered = markdown_to_slack_mrkdwn(message.text)
        replying = message.reply_to_platform_id if message.kind == "reply" else None

        async def post(text: str, as_markup: bool, blocks: list[dict[str, Any]] | None = None) -> None:
            extra = {"blocks": blocks} if blocks else {}
            answer = await self._call(
                partial(
                    self._client.chat_postMessage,
                    channel=chat.chat_id,
                    text=text,
                    thread_ts=chat.thread_id,
                    mrkdwn=as_markup,
                    **extra,
                )
            )
            if replying:
                self.remember_reply(replying, f"{chat.chat_id}:{answer['ts']}")
            if blocks:
                self._prompts.record(message, f"{chat.chat_id}:{answer['ts']}")

        if message.choices and len(rendered) <= SECTION_LIMIT:
            await self._retry.run(
                partial(post, rendered, True, choice_blocks(rendered, message.choices, message.prompt_id)),
                f"[{chat.session_key}] send {message.id}",
                (ChannelUnavailable,),
            )
            return
        if message.text.strip():
            await send_in_chunks(message, MAX_MESSAGE_LENGTH, markdown_to_slack_mrkdwn, _first_two(post), self._retry)
        if message.choices:
            labels = " / ".join(choice.label for choice in message.choices)
            await self._retry.run(
                partial(post, labels, False, choice_blocks(None, message.choices, message.prompt_id)),
                f"[{chat.session_key}] send {message.id} buttons",
                (ChannelUnavailable,),
            )

    async def _post_ephemeral(self, message: OutboundMessage, user: str) -> bool:
        """chat.postEphemeral, seen only by `user`; False when Slack refuses (then everyone sees it)."""
        chat = message.chat
        text = markdown_to_slack_mrkdwn(message.text)[:MAX_MESSAGE_LENGTH]
        extra: dict[str, Any] = {}
        if message.choices and len(text) <= SECTION_LIMIT:
            extra["blocks"] = choice_blocks(text, message.choices, message.prompt_id)
        try:
            await self._call(
                lambda: self._client.chat_postEphemeral(
                    channel=chat.chat_id, user=user, text=text, thread_ts=chat.thread_id, **extra
                )
            )
        except ChannelUnavailable:
            raise
        except ChannelError as exc:
            logger.info("[%s] private notice to %s refused (%s); posting it", chat.session_key, user, exc)
            return False
        return True

    async def _upload(self, message: OutboundMessage) -> None:
        """Slack's external upload (files.getUploadURLExternal, the bytes, files.completeUploadExternal)."""
        uploads = [
            {"file": file.path, "filename": Path(file.path).name, "title": Path(file.path).name}
            for file in message.files
        ]
        await self._call(
            partial(
                self._client.files_upload_v2,
                file_uploads=uploads,
                channel=message.chat.chat_id,
                thread_ts=message.chat.thread_id,
                initial_comment=message.text or None,
            )
        )


def _first_two(post: Callable[..., Any]) -> Callable[[str, bool, bool], Any]:
    """send_in_chunks' post(text, as_markup, first) for a post that takes no `first`."""
    return lambda text, as_markup, first: post(text, as_markup)
