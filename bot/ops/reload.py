"""`relaybot reload` and SIGHUP: re-read config.yaml, apply what can change live, name what needs a restart."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from bot.config.changes import changed_keys, describe, is_live
from bot.config.schema import Config
from bot.errors import ConfigError

logger = logging.getLogger(__name__)

Apply = Callable[[Config], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ReloadReport:
    """What a reload did: `error` when the file was refused, else the keys applied and those needing a restart."""

    applied: list[str] = field(default_factory=list)
    restart_needed: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        """The report as the control socket sends it."""
        return {
            "ok": self.error is None,
            "applied": self.applied,
            "restart_needed": self.restart_needed,
            **({"error": self.error} if self.error else {}),
        }


class ConfigReload:
    """Holds the running config; `reload` swaps in a re-read one through `apply`, or keeps it when invalid."""

    def __init__(self, config: Config, apply: Apply, load: Callable[[Path], Config] | None = None) -> None:
        from bot.config.loader import load_config

        self.current = config
        self._apply = apply
        self._load = load or load_config

    async def reload(self) -> ReloadReport:
        """Re-read the config file; one ERROR and the old config kept when it does not load."""
        source = self.current.source
        if source is None:
            return ReloadReport(error="this gateway's config came from no file")
        try:
            new = self._load(source)
        except ConfigError as exc:
            logger.error("reload: %s; the running config stays", exc)
            return ReloadReport(error=str(exc))
        keys = changed_keys(self.current, new)
        live = [key for key in keys if is_live(key)]
        restart = [key for key in keys if not is_live(key)]
        for key in restart:
            logger.warning("reload: %s; it takes effect after a restart", describe(key, new))
        if live:
            await self._apply(new)
        self.current = new
        logger.info("reload: %s", f"applied {', '.join(live)}" if live else "no live change")
        return ReloadReport(live, restart)
