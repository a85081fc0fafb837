"""/agent: which of the gateway's agents answers in this chat, and the binding that decided it."""

from __future__ import annotations

from bot.agents.bindings import Route


def which_agent_answer(route: Route, agents: int) -> str:
    """The reply to /agent: the agent's name and why it answers here."""
    if agents == 1:
        return f"Agent {route.agent} answers here (it is this gateway's only agent)."
    if route.binding is None:
        return f"Agent {route.agent} answers here: no binding matches this chat, so the default agent does."
    return f"Agent {route.agent} answers here, by bindings[{route.binding}] ({route.match})."
