"""The typed, frozen event each hook point receives, and the decisions a hook may return."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.bus import AboutChat, ChatRef


@dataclass(frozen=True, slots=True)
class Block:
    """Stop what the hook point is about to do; the model (or, for message hooks, the sender) sees `reason`."""

    reason: str


@dataclass(frozen=True, slots=True)
class Replace:
    """Go on with `value` instead: new arguments, text, context or result, depending on the hook point."""

    value: Any


Decision = Block | Replace


@dataclass(frozen=True, slots=True)
class MessageReceived:
    """An inbound message reached the agent (Block drops it and answers the reason)."""

    chat: ChatRef
    sender_id: str
    role: str
    text: str
    message_id: str


@dataclass(frozen=True, slots=True)
class MessageSending:
    """The agent is about to send a reply (Replace(text) rewrites it, Block drops it)."""

    chat: ChatRef
    text: str
    in_reply_to: str | None


@dataclass(frozen=True, slots=True)
class MessageSent:
    """A reply was handed to the outbound queue."""

    chat: ChatRef
    text: str
    in_reply_to: str | None


@dataclass(frozen=True, slots=True)
class BeforeAgentStart(AboutChat):
    """A turn is about to call the model with `system_prompt` (Replace(text) makes `text` the system prompt)."""

    chat: ChatRef
    sender_id: str
    role: str
    text: str
    system_prompt: str


@dataclass(frozen=True, slots=True)
class AgentBootstrap(AboutChat):
    """A turn's system prompt is about to be built with `files` (workspace-relative names, in order).

    Replace(names) builds it with those files instead: add some, drop some, reorder them.
    """

    chat: ChatRef
    role: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AgentEnd(AboutChat):
    """A turn ended: how (answered, timed out, stopped, ...), the reply if any, what it added and the tokens it used.

    `messages` are the messages the turn added to its session (the user's, the model's, tool results);
    `prompt_tokens` and `completion_tokens` add up its model calls.
    """

    chat: ChatRef
    sender_id: str
    outcome: str
    reply: str | None
    messages: tuple[dict[str, Any], ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class BeforeToolCall(AboutChat):
    """The model asked for a tool (Block(reason) refuses it, Replace(arguments) changes its arguments)."""

    tool: str
    arguments: dict[str, Any]
    chat: ChatRef
    sender_id: str
    role: str


@dataclass(frozen=True, slots=True)
class AfterToolCall(AboutChat):
    """A tool call finished (Replace(text) gives the model `text` as the result instead)."""

    tool: str
    arguments: dict[str, Any]
    result: str
    is_error: bool
    chat: ChatRef
    sender_id: str
    role: str


@dataclass(frozen=True, slots=True)
class ToolResultPersist(AboutChat):
    """A tool result is about to be saved in the session (Replace(text) saves `text` instead)."""

    tool: str
    result: str
    chat: ChatRef


@dataclass(frozen=True, slots=True)
class BeforeCompaction(AboutChat):
    """Memory consolidation of a chat's session begins; `messages` are not yet consolidated."""

    chat: ChatRef
    messages: int


@dataclass(frozen=True, slots=True)
class AfterCompaction(AboutChat):
    """Consolidation ended: `messages` were folded into memory; `ok` is False when it crashed."""

    chat: ChatRef
    messages: int
    ok: bool


@dataclass(frozen=True, slots=True)
class SessionStart(AboutChat):
    """A session's first turn begins (a new chat, or the first message after /new)."""

    chat: ChatRef


@dataclass(frozen=True, slots=True)
class SessionEnd(AboutChat):
    """A session was closed by /new."""

    chat: ChatRef
    messages: int


@dataclass(frozen=True, slots=True)
class GatewayStart:
    """The gateway started, with these channels."""

    channels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GatewayStop:
    """The gateway is stopping."""


@dataclass(frozen=True, slots=True)
class CommandIssued:
    """A built-in session command arrived, before it acts: `new`, `reset` or `stop`."""

    chat: ChatRef
    sender_id: str
    role: str
    command: str


@dataclass(frozen=True, slots=True)
class CommandInvoked:
    """A plugin's `/name` command arrived; the handler returns the reply text."""

    chat: ChatRef
    sender_id: str
    role: str
    text: str
    args: str
    sender_name: str = ""


HOOK_EVENTS: dict[str, type] = {
    "message_received": MessageReceived,
    "message_sending": MessageSending,
    "message_sent": MessageSent,
    "agent_bootstrap": AgentBootstrap,
    "before_agent_start": BeforeAgentStart,
    "agent_end": AgentEnd,
    "before_tool_call": BeforeToolCall,
    "after_tool_call": AfterToolCall,
    "tool_result_persist": ToolResultPersist,
    "before_compaction": BeforeCompaction,
    "after_compaction": AfterCompaction,
    "session_start": SessionStart,
    "session_end": SessionEnd,
    "gateway_start": GatewayStart,
    "gateway_stop": GatewayStop,
    "command": CommandIssued,
}
"""Every hook point and the event class its handlers receive."""
