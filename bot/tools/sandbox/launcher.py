"""Where exec runs for a config: bubblewrap hiding what relaybot keeps private, or the host."""

from __future__ import annotations

import os
from pathlib import Path

from bot.config.paths import home_dir
from bot.config.schema import Config
from bot.tools.protected import ProtectedPaths
from bot.tools.sandbox.exec_sandbox import BwrapSandbox, HostShell, Launcher, choose_launcher


def exec_launcher(config: Config) -> Launcher:
    """Bubblewrap hiding the relaybot home, state, config and the user's home, or the host, as `tools.exec` says."""
    exec_config = config.tools.exec
    hidden = (home_dir(), config.state_dir, *([config.source] if config.source else []), Path.home())
    rules = tuple(ProtectedPaths(config.workspace, config.tools.protected_paths).paths)
    sandbox = BwrapSandbox(
        config.workspace, hidden=hidden, network=exec_config.network, extra_env=exec_config.env, read_only=rules
    )
    return choose_launcher(exec_config.sandbox, sandbox, HostShell(os.environ, tuple(config.secrets())))
