"""Finds plugins (the `relaybot.plugins` entry point group, then the config's list) and calls their `register(api)`."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from bot.errors import ConfigError
from bot.hooks.handlers import Hooks, OnError
from bot.plugins.api import ChannelClass, PluginApi, Registrations
from bot.tools.base import Tool

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "relaybot.plugins"


@dataclass
class Plugins:
    """Everything the loaded plugins registered."""

    hooks: Hooks = field(default_factory=Hooks)
    tools: list[Tool] = field(default_factory=list)
    channels: list[ChannelClass] = field(default_factory=list)
    loaded: list[Registrations] = field(default_factory=list)


def load_plugins(specs: list[tuple[str, OnError]], base: Path, hooks: Hooks | None = None) -> Plugins:
    """Load entry-point plugins, then each (spec, on_error): a dotted module or a .py path relative to `base`."""
    plugins = Plugins(hooks or Hooks())
    for point in entry_points(group=ENTRY_POINT_GROUP):
        _register(plugins, f"{point.name} ({point.value})", point.load(), "block")
    for spec, on_error in specs:
        _register(plugins, spec, _import(spec, base), on_error)
    return plugins


def _import(spec: str, base: Path) -> ModuleType:
    try:
        if spec.endswith(".py") or "/" in spec:
            path = (base / spec).resolve()
            module_spec = importlib.util.spec_from_file_location(f"relaybot_plugin_{path.stem}", path)
            if module_spec is None or module_spec.loader is None or not path.exists():
                raise ConfigError(f"plugin file {path} not found", "plugins")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[module_spec.name] = module  # so the plugin's own classes pickle and import like any module's
            module_spec.loader.exec_module(module)
            return module
        return importlib.import_module(spec)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"plugin {spec!r} failed to import: {exc!r}", "plugins") from exc


def _register(plugins: Plugins, name: str, target: Any, on_error: OnError) -> None:
    register = getattr(target, "register", target)
    if not callable(register):
        raise ConfigError(f"plugin {name!r} has no register(api) function", "plugins")
    record = Registrations(name)
    register(PluginApi(plugins.hooks, plugins.tools, plugins.channels, record, on_error))
    plugins.loaded.append(record)
    logger.info("plugin %s loaded", name)
