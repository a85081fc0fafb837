"""/agent: which of the gateway's agents answers in this chat, and the binding that decided it."""

from __future__ import annotations

from bot.agents.bindings import Route


def which_agent_answer(route: Route, agents: list[str], fixed: bool = False) -> str:
    """The reply to /agent: the agent's name and why it answers here; `fixed` when this chat (the terminal's)
    talks to its agent whatever the bindings say."""
    others = [name for name in agents if name != route.agent]
    if not others:
        return f"Agent {route.agent} answers here (it is this gateway's only agent)."
    if fixed:
        return (
            f"Agent {route.agent} answers here: this chat always talks to it; the gateway's other agents "
            f"({', '.join(others)}) answer in the chats bound to them."
        )
    if route.binding is None:
        return f"Agent {route.agent} answers here: no binding matches this chat, so the default agent does."
    return f"Agent {route.agent} answers here, by bindings[{route.binding}] ({route.match})."
