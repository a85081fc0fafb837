"""The fake Discord's interactions: slash commands and button presses out, callbacks and webhook follow-ups in."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.fakes import discord_payloads as payloads

ACK_DEADLINE = 3.0  # Discord forgets an interaction not answered within 3 s
DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE = 5, 6
EPHEMERAL, LOADING = 1 << 6, 1 << 7  # message flags


class InteractionError(Exception):
    """An error answer for the fake's HTTP layer: status and Discord's JSON body."""

    def __init__(self, status: int, message: str, code: int) -> None:
        super().__init__(message)
        self.status, self.body = status, {"message": message, "code": code}


@dataclass
class OpenInteraction:
    """One interaction sent to the bot: when, and what it answered."""

    payload: dict
    sent_at: float
    component_message_id: int | None
    acknowledged_as: int | None = None
    acknowledged_after: float | None = None
    original_id: int | None = None


@dataclass
class InteractionDesk:
    """Builds interaction payloads and answers the bot's callbacks, follow-ups and command registrations."""

    bot: dict
    ids: Iterator[int]
    messages: dict[int, dict]
    clock: Callable[[], float] = time.monotonic
    open: dict[str, OpenInteraction] = field(default_factory=dict)
    callbacks: list[dict] = field(default_factory=list)
    followups: list[dict] = field(default_factory=list)
    original_edits: list[dict] = field(default_factory=list)
    deleted: list[dict] = field(default_factory=list)
    commands: dict[int | None, list[dict]] = field(default_factory=dict)
    command_puts: list[int | None] = field(default_factory=list)

    def interaction(self, kind: int, channel: dict, guild_id: int | None, user: dict, data: dict, message: Any) -> dict:
        """A new INTERACTION_CREATE payload, kept open for the bot's answers."""
        payload = payloads.interaction(next(self.ids), self.bot["id"], kind, uuid.uuid4().hex, channel, guild_id, user)
        payload["data"] = data
        if message is not None:
            payload["message"] = message
        component_message = int(message["id"]) if message is not None else None
        self.open[payload["token"]] = OpenInteraction(payload, self.clock(), component_message)
        return payload

    def callback(self, interaction_id: int, token: str, body: dict) -> dict:
        """POST /interactions/{id}/{token}/callback: the first answer, within 3 s, once."""
        opened = self._opened(token)
        if int(opened.payload["id"]) != interaction_id:
            raise InteractionError(404, "Unknown interaction", 10062)
        if opened.acknowledged_as is not None:
            raise InteractionError(400, "Interaction has already been acknowledged.", 40060)
        after = self.clock() - opened.sent_at
        if after > ACK_DEADLINE:
            raise InteractionError(404, "Unknown interaction", 10062)
        opened.acknowledged_as, opened.acknowledged_after = body["type"], after
        self.callbacks.append({**body, "interaction_id": interaction_id, "after": after})
        resource: dict[str, Any] = {"type": body["type"]}
        if body["type"] == DEFERRED_CHANNEL_MESSAGE:
            flags = LOADING | ((body.get("data") or {}).get("flags") or 0)
            original = self._bot_message(opened, "", flags)
            opened.original_id = int(original["id"])
            resource["message"] = original
        elif body["type"] == DEFERRED_UPDATE_MESSAGE:
            opened.original_id = opened.component_message_id
        answer = {"id": str(interaction_id), "type": opened.payload["type"]}
        answer.update(
            response_message_loading=body["type"] == DEFERRED_CHANNEL_MESSAGE, response_message_ephemeral=False
        )
        if opened.original_id is not None:
            answer["response_message_id"] = str(opened.original_id)
        return {"interaction": answer, "resource": resource}

    def followup(self, application_id: int, token: str, body: dict) -> dict:
        """POST /webhooks/{app}/{token}: a follow-up message; the first after a deferred command fills its response."""
        opened = self._answered(application_id, token)
        original = self.messages.get(opened.original_id or 0)
        if original is not None and original["flags"] & LOADING:
            return self.edit(application_id, token, "@original", body)
        message = self._bot_message(opened, body.get("content") or "", body.get("flags") or 0)
        message["components"] = body.get("components") or []
        self.followups.append({**body, "id": message["id"], "ephemeral": bool(message["flags"] & EPHEMERAL)})
        return message

    def edit(self, application_id: int, token: str, message_id: str, body: dict) -> dict:
        """PATCH /webhooks/{app}/{token}/messages/{@original | id}: edit the response or a follow-up."""
        opened = self._answered(application_id, token)
        target = opened.original_id if message_id == "@original" else int(message_id)
        message = self.messages.get(target or 0)
        if message is None:
            raise InteractionError(404, "Unknown Message", 10008)
        if "content" in body:
            message["content"] = body["content"] or ""
        if "components" in body:
            message["components"] = body["components"] or []
        message["flags"] &= ~LOADING
        self.original_edits.append({**body, "id": message["id"], "message_id": message_id})
        return message

    def delete(self, application_id: int, token: str, message_id: str) -> None:
        """DELETE /webhooks/{app}/{token}/messages/{@original | id}: withdraw the response or a follow-up."""
        opened = self._answered(application_id, token)
        target = opened.original_id if message_id == "@original" else int(message_id)
        if self.messages.pop(target or 0, None) is None:
            raise InteractionError(404, "Unknown Message", 10008)
        self.deleted.append({"id": str(target), "message_id": message_id})

    def put_commands(self, guild_id: int | None, body: list[dict]) -> list[dict]:
        """PUT …/commands: replace the registered commands, giving each an id."""
        registered = [
            {
                **command,
                "id": str(next(self.ids)),
                "application_id": self.bot["id"],
                "version": "1",
                "default_member_permissions": _permissions(command.get("default_member_permissions")),
            }
            for command in body
        ]
        self.commands[guild_id] = registered
        self.command_puts.append(guild_id)
        return registered

    def _opened(self, token: str) -> OpenInteraction:
        opened = self.open.get(token)
        if opened is None:
            raise InteractionError(404, "Unknown interaction", 10062)
        return opened

    def _answered(self, application_id: int, token: str) -> OpenInteraction:
        opened = self.open.get(token)
        if opened is None or application_id != int(self.bot["id"]) or opened.acknowledged_as is None:
            raise InteractionError(404, "Unknown Webhook", 10015)
        return opened

    def _bot_message(self, opened: OpenInteraction, content: str, flags: int) -> dict:
        payload = opened.payload
        guild_id = int(payload["guild_id"]) if "guild_id" in payload else None
        message = payloads.message(next(self.ids), int(payload["channel_id"]), guild_id, self.bot, content)
        message.update(flags=flags, webhook_id=self.bot["id"], application_id=self.bot["id"])
        self.messages[int(message["id"])] = message
        return message


def _permissions(value: object) -> str | None:
    """`default_member_permissions` as Discord answers it: a permission bit set as a string, or null."""
    return None if value is None else str(value)
