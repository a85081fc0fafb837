"""The ask_user tool: the model asks the chat a question with 2–6 options and waits for a press or a typed answer."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.bus import ChatRef, Choice, InboundMessage, OutboundMessage, Trust
from bot.errors import ToolError
from bot.tools.base import Tool, ToolContext

logger = logging.getLogger(__name__)

NO_ANSWER = "no answer"
NOT_YOURS = "Not yours: only someone as trusted as the person who was asked can answer this question."
PROMPT_PREFIX = "ask"


@dataclass
class _Question:
    prompt_id: str
    text: str
    options: tuple[str, ...]
    answered: asyncio.Future[str]
    send: Callable[[OutboundMessage], Awaitable[None]]
    trust: Trust  # the turn's: a less trusted sender's words never become its tool result


class Questions:
    """The open question of each chat (one at a time); a press on it or the chat's next message answers it."""

    def __init__(self) -> None:
        self._open: dict[str, _Question] = {}

    def is_open(self, session_key: str) -> bool:
        """Whether the chat has a question waiting."""
        return session_key in self._open

    async def ask(self, ctx: ToolContext, text: str, options: tuple[str, ...], timeout: float) -> str:
        """Post the question with its options as buttons; the answer, or NO_ANSWER after `timeout` seconds."""
        key = ctx.session_key
        if key in self._open:
            raise ToolError("a question is already waiting for an answer in this chat; wait for it first")
        prompt_id = f"{PROMPT_PREFIX}{secrets.token_hex(4)}"
        answered = asyncio.get_running_loop().create_future()
        question = _Question(prompt_id, text, options, answered, ctx.send, ctx.trust)
        self._open[key] = question
        logger.info("[%s] question %s asked with %d options", key, question.prompt_id, len(options))
        choices = tuple(Choice(str(number), option) for number, option in enumerate(options, 1))
        try:
            await ctx.send(
                OutboundMessage(
                    ctx.chat,
                    text,
                    in_reply_to=ctx.turn_id,
                    kind="progress",
                    choices=choices,
                    prompt_id=question.prompt_id,
                )
            )
            async with asyncio.timeout(timeout):
                return await question.answered
        except TimeoutError:
            logger.info("[%s] question %s got no answer", key, question.prompt_id)
            await _close(question, ctx.chat, f"{text}\n→ no answer (timed out)")
            return NO_ANSWER
        finally:
            self._open.pop(key, None)

    async def take(self, message: InboundMessage) -> bool:
        """Answer the chat's open question with a press on it or a typed message (not a command); True when taken.

        Only a sender at least as trusted as the turn answers: anyone else's press gets a notice only they see, and
        their typed message is left to be queued as any message (so a turn it joins acts with their trust)."""
        question = self._open.get(message.chat.session_key)
        if question is None or question.answered.done():
            return False
        if not message.trust.at_least(question.trust):
            if message.press is None or message.press.prompt_id != question.prompt_id:
                return False
            notice = OutboundMessage(message.chat, NOT_YOURS, kind="notice", private_to=message.sender_id)
            await question.send(notice)
            return True
        who = message.sender_name or message.sender_id
        press = message.press
        if press is not None:
            if press.prompt_id != question.prompt_id or not press.choice_id.isdigit():
                return False
            answer = _option(question, press.choice_id)
            if answer is None:
                return False
            shown = f"{question.text}\n→ {answer} ({who})"
            await question.send(OutboundMessage(message.chat, shown, kind="notice", edit_of=press.prompt_message_id))
        elif message.text.startswith("/") or not message.text.strip():
            return False
        else:
            answer = _option(question, message.text.strip()) or message.text.strip()
            await _close(question, message.chat, f"{question.text}\n→ {answer} ({who}, typed)")
        question.answered.set_result(f"{who} answered: {answer}")
        logger.info("[%s] question %s answered by %s", message.chat.session_key, question.prompt_id, message.sender_id)
        return True


async def _close(question: _Question, chat: ChatRef, text: str) -> None:
    """Replace the question, buttons removed, with how it ended (it was closed without a press)."""
    await question.send(OutboundMessage(chat, text, kind="notice", prompt_id=question.prompt_id))


def _option(question: _Question, text: str) -> str | None:
    """The option a number names (1-based), or None."""
    if text.isdigit() and 1 <= int(text) <= len(question.options):
        return question.options[int(text) - 1]
    return None


class AskUserTool(Tool):
    """Asks the chat a multiple-choice question and returns the answer (or "no answer" after the timeout)."""

    name = "ask_user"
    description = (
        "Ask the user a question with 2 to 6 short options, shown as buttons, and wait for the answer. Use it when "
        "you need a decision to go on. The result is the chosen option or the user's own words, or 'no answer'."
    )
    parameters = {
        "type": "object",
        "properties": {
            "question": {"type": "string", "minLength": 1, "description": "The question."},
            "options": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 60},
                "minItems": 2,
                "maxItems": 6,
                "description": "The answers to offer, 2 to 6 of them.",
            },
        },
        "required": ["question", "options"],
    }
    for_everyone = True  # asks the person who is talking; reaches nothing else

    def __init__(self, questions: Questions, timeout: float) -> None:
        self._questions = questions
        self._timeout = timeout

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        options = tuple(str(option).strip() for option in args.get("options", ()) if str(option).strip())
        if not 2 <= len(options) <= 6:
            raise ToolError("give 2 to 6 options")
        return await self._questions.ask(ctx, str(args["question"]), options, self._timeout)
