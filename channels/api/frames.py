"""The WebSocket wire protocol: one JSON object per frame, built from stream events and outbound messages."""

from __future__ import annotations

from typing import Any

from bot.bus import OutboundMessage
from bot.events import (
    Event,
    ReasoningDelta,
    StreamDelta,
    StreamEnded,
    StreamStarted,
    SubagentCompleted,
    SubagentSpawned,
    ToolCalled,
    ToolFinished,
    TurnFinished,
    TurnStarted,
)

Frame = dict[str, Any]


def event_frame(event: Event, client_id: str | None) -> Frame | None:
    """The frame an event becomes for its session's watchers, or None when it is not part of the protocol."""
    match event:
        case StreamStarted(msg_id=msg_id):
            return {"type": "stream_start", "msg_id": msg_id, "reply_to": client_id}
        case StreamDelta(msg_id=msg_id, text=text):
            return {"type": "stream_chunk", "msg_id": msg_id, "text": text}
        case ReasoningDelta(msg_id=msg_id, text=text):
            return {"type": "reasoning", "msg_id": msg_id, "text": text}
        case StreamEnded(msg_id=msg_id, finish_reason=reason):
            return {"type": "stream_end", "msg_id": msg_id, "finish_reason": reason}
        case ToolCalled(tool=name, summary=summary):
            return {"type": "tool_call", "name": name, "summary": summary}
        case ToolFinished(tool=name):
            return {"type": "tool_result", "name": name, "ok": event.ok}
        case TurnStarted(turn_id=run_id):
            return {"type": "status", "state": "working", "reply_to": client_id, "run_id": run_id}
        case TurnFinished(outcome=outcome, replied=replied):
            return {"type": "status", "state": "idle", "outcome": outcome, "replied": replied, "reply_to": client_id}
        case SubagentSpawned(subagent_id=helper, label=label):
            return {"type": "subagent", "phase": "spawned", "id": helper, "label": label}
        case SubagentCompleted(subagent_id=helper, label=label, status=status):
            return {"type": "subagent", "phase": "completed", "id": helper, "label": label, "status": status}
    return None


def message_frame(message: OutboundMessage, client_id: str | None) -> Frame:
    """The frame of a message for the chat: a turn's final reply, a notice, or an error."""
    if message.kind == "error":
        return {"type": "error", "message": message.text, "reply_to": client_id}
    return {"type": "message", "text": message.text, "reply_to": client_id, "kind": message.kind}
