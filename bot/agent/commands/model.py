"""`/model`: show the models this chat may use (as buttons), switch with `/model <alias>`, or go back to the default."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.agent.persona.chat_models import ChatModels
from bot.bus import Choice, InboundMessage, OutboundMessage, Trust

logger = logging.getLogger(__name__)

PROMPT_ID = "model"
"""The prompt id of the model picker's buttons; a choice's id is the model's alias (or `default`)."""
NOT_ALLOWED = "Only the bot's owners and admins can change this chat's model."


class ModelCommand:
    """Answers `/model …` and presses on its picker; owners and admins switch, everyone may look."""

    def __init__(
        self,
        models: ChatModels,
        configured: Callable[[InboundMessage], str],
        publish: Callable[[OutboundMessage], Awaitable[object]],
    ) -> None:
        self._models = models
        self._configured = configured
        self._publish = publish

    def answer(self, message: InboundMessage) -> tuple[str, tuple[Choice, ...]]:
        """The reply to `/model [alias|default]` and the picker's buttons (none once something was switched)."""
        _, _, wanted = message.text.partition(" ")
        wanted = wanted.strip().lower()
        if not wanted:
            return self._menu(message)
        return self._switch(message, wanted), ()

    async def pressed(self, message: InboundMessage) -> bool:
        """Take a press on the picker: switch and show the choice in place, or tell only the presser they may not."""
        press = message.press
        if press is None or press.prompt_id != PROMPT_ID:
            return False
        if not message.trust.at_least(Trust.ADMIN):
            notice = OutboundMessage(message.chat, NOT_ALLOWED, kind="notice", private_to=message.sender_id)
            await self._publish(notice)
            return True
        text = self._switch(message, press.choice_id)
        who = message.sender_name or message.sender_id
        shown = f"{text.rstrip('.')}, chosen by {who}."
        await self._publish(OutboundMessage(message.chat, shown, kind="notice", edit_of=press.prompt_message_id))
        return True

    def current(self, message: InboundMessage) -> str:
        """The model this chat speaks with, and whether it was chosen here."""
        choice = self._models.chosen(message.chat.session_key)
        if choice is None:
            return f"{self._configured(message)} (default)"
        return f"{choice.name} (chosen for this chat as {choice.alias})"

    def _menu(self, message: InboundMessage) -> tuple[str, tuple[Choice, ...]]:
        offered = self._models.offered
        if not offered:
            return f"Model: {self.current(message)}. No other models are offered (llm.models is empty).", ()
        chosen = self._models.chosen(message.chat.session_key)
        lines = [f"Model: {self.current(message)}", "Models this chat can use:"]
        lines += [f"- {alias}: {choice.name}" for alias, choice in offered.items()]
        lines.append("Switch with /model <alias>; /model default goes back.")
        choices = [
            Choice(alias, alias, "primary" if choice is chosen else "default") for alias, choice in offered.items()
        ]
        choices.append(Choice("default", "default"))
        return "\n".join(lines), tuple(choices)

    def _switch(self, message: InboundMessage, wanted: str) -> str:
        if not message.trust.at_least(Trust.ADMIN):
            return NOT_ALLOWED
        key = message.chat.session_key
        if wanted == "default":
            self._models.choose(key, None)
            return f"This chat uses the default model again: {self._configured(message)}."
        choice = self._models.offered.get(wanted)
        if choice is None:
            known = ", ".join(self._models.offered) or "none"
            return f"No model is called {wanted!r} (models: {known}; or default)."
        self._models.choose(key, choice.alias)
        return f"This chat now uses {choice.name} ({choice.alias})."
