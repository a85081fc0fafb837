"""What a plugin's `register(api)` receives: hooks, commands, tools and channels, and a record of what it added."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.bus import InboundMessage
from bot.commands.catalogue import reserved_words
from bot.errors import ConfigError
from bot.hooks.handlers import Handler, Hooks, OnError
from bot.hooks.hook_events import CommandInvoked
from bot.tools.base import Tool


class ChannelClass(Protocol):
    """A plugin's chat channel class: it has a `name` and is built as `channel_class(publish)`."""

    name: str

    def __call__(self, publish: Callable[[InboundMessage], Awaitable[Any]]) -> Any: ...


@dataclass
class Registrations:
    """What one plugin registered, for `relaybot plugins`."""

    plugin: str
    hooks: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)


class PluginApi:
    """The plugin api, exactly: `on`, `command`, `tool`, `channel`."""

    def __init__(
        self,
        hooks: Hooks,
        tools: list[Tool],
        channels: list[ChannelClass],
        record: Registrations,
        on_error: OnError = "block",
    ) -> None:
        self._hooks = hooks
        self._on_error = on_error
        self._tools = tools
        self._channels = channels
        self._record = record

    def on(self, hook_name: str, handler: Handler) -> None:
        """Call `handler(event)` at a hook point; it returns None, Block(reason) or Replace(value)."""
        self._hooks.on(hook_name, handler, plugin=self._record.plugin, on_error=self._on_error)
        self._record.hooks.append(hook_name)

    def command(self, name: str, handler: Callable[[CommandInvoked], Any]) -> None:
        """Answer `/name` with the handler's returned text, without a model call; a built-in's name is refused."""
        word = name.lstrip("/").lower()
        if word in reserved_words():
            plugin = self._record.plugin
            raise ConfigError(
                f"plugin {plugin!r}: /{word} is a built-in command; give the command another name", "plugins"
            )
        self._hooks.command(word, handler)
        self._record.commands.append(word)

    def tool(self, tool: Tool) -> None:
        """Offer a tool to the model, like the built-ins."""
        self._tools.append(tool)
        self._record.tools.append(tool.name)

    def channel(self, channel_class: ChannelClass) -> None:
        """Add a chat channel; the gateway builds it as `channel_class(publish)`."""
        if not isinstance(getattr(channel_class, "name", None), str):
            raise ConfigError(f"plugin {self._record.plugin!r}: a channel class needs a `name`", "plugins")
        self._channels.append(channel_class)
        self._record.channels.append(channel_class.name)
