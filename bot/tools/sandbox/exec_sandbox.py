"""Where exec's commands run: a bubblewrap sandbox that cannot see the relaybot home, or the bare host."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol

from bot.errors import ConfigError
from bot.tools.sandbox.mounts import DETACHED, SANDBOX_PATH, fresh_tmp, hidden, system_mounts, system_roots, under

SandboxMode = Literal["auto", "bwrap", "off"]
SECRET_NAME = re.compile(r"(_TOKEN|_KEY|_SECRET)$|PASSWORD|PASSWD|API_KEY|SECRET", re.IGNORECASE)
PROBE_TIMEOUT = 15.0


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start one command: the program with its arguments, and the whole environment it gets."""

    argv: tuple[str, ...]
    env: dict[str, str]


class Launcher(Protocol):
    """Turns a shell command into a Launch; `description` is one line for logs and `relaybot status`."""

    @property
    def description(self) -> str: ...

    def launch(self, command: str, rules_writable: bool = False) -> Launch: ...


def scrubbed_env(environ: Mapping[str, str], secrets: Iterable[str]) -> dict[str, str]:
    """The environment minus variables named like a secret and any variable holding one of `secrets`."""
    values = [secret for secret in secrets if secret]
    return {
        name: value
        for name, value in environ.items()
        if not SECRET_NAME.search(name) and not any(secret in value for secret in values)
    }


@dataclass(frozen=True)
class HostShell:
    """The guard rail without a sandbox: /bin/sh on the host, with secret-looking variables removed."""

    environ: Mapping[str, str]
    secrets: tuple[str, ...]
    reason: str = "tools.exec.sandbox is off"

    @property
    def description(self) -> str:
        return f"NOT sandboxed ({self.reason}): commands run with the bot's user rights; only the guard rail applies"

    def launch(self, command: str, rules_writable: bool = False) -> Launch:
        return Launch(("/bin/sh", "-c", command), scrubbed_env(self.environ, self.secrets))


@dataclass(frozen=True)
class BwrapSandbox:
    """bubblewrap: the workspace read-write (but its `read_only` rules), system folders read-only, private /tmp."""

    workspace: Path
    bwrap: str = "bwrap"
    hidden: tuple[Path, ...] = ()
    network: bool = True
    extra_env: Mapping[str, str] = field(default_factory=dict)
    read_only: tuple[Path, ...] = ()

    @property
    def description(self) -> str:
        network = "network on" if self.network else "no network"
        return f"sandboxed by bubblewrap ({self.bwrap}; workspace read-write, {network})"

    def launch(self, command: str, rules_writable: bool = False) -> Launch:
        # bwrap is pid 1 inside, so /proc/1/environ shows exactly the environment it was started with.
        arguments = self.arguments(rules_writable)
        return Launch((self.bwrap, *arguments, "--", "/bin/sh", "-c", command), self.environment())

    def environment(self) -> dict[str, str]:
        """A fixed minimal environment plus the owner's `tools.exec.env`."""
        base = {"PATH": SANDBOX_PATH, "HOME": str(self.workspace.resolve()), "LANG": "C.UTF-8", "TERM": "dumb"}
        return {**base, **self.extra_env}

    def arguments(self, rules_writable: bool = False) -> list[str]:
        """bwrap's options; later mounts cover earlier ones, which is how hidden and read-only paths stay so."""
        workspace = self.workspace.resolve()
        args = system_mounts()
        resolv = Path("/etc/resolv.conf")
        if resolv.is_symlink() and not under(resolv.resolve(), system_roots()):
            args += ["--ro-bind-try", str(resolv.resolve()), str(resolv.resolve())]
        args += fresh_tmp()
        covered = [path.resolve() for path in self.hidden if path.exists() and path.resolve() != workspace]
        inside = [path for path in covered if path.is_relative_to(workspace)]
        args += hidden([path for path in covered if path not in inside and under(path, system_roots())])
        args += ["--bind", str(workspace), str(workspace)]
        if not rules_writable:
            for path in self.read_only:  # a missing one is covered by an empty read-only file, so none is made
                args += ["--ro-bind", str(path) if path.exists() else "/dev/null", str(path)]
        args += hidden(inside)
        args += ["--chdir", str(workspace), "--unshare-pid", "--unshare-ipc", "--unshare-cgroup-try"]
        if not self.network:
            args.append("--unshare-net")
        return [*args, *DETACHED]


@functools.cache
def bwrap_problem(bwrap: str) -> str | None:
    """Why this bwrap cannot run a sandbox here (user namespaces off, say), or None when it can; probed once."""
    with tempfile.TemporaryDirectory() as scratch:
        launch = BwrapSandbox(Path(scratch), bwrap).launch("true")
        try:
            done = subprocess.run(launch.argv, env=launch.env, capture_output=True, timeout=PROBE_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{bwrap} failed to start: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{bwrap} cannot create a sandbox here: {detail[-1] if detail else f'exit code {done.returncode}'}"
    return None


def choose_launcher(
    mode: SandboxMode, sandbox: BwrapSandbox, host: HostShell, which: Callable[[str], str | None] = shutil.which
) -> Launcher:
    """The sandbox when bwrap is installed and runs; the host guard rail for `off`, or for `auto` without it."""
    if mode == "off":
        return host
    found = which(sandbox.bwrap)
    if found:
        problem = bwrap_problem(found)
        if problem is None:
            return replace(sandbox, bwrap=found)
    else:
        problem = "bwrap is not installed (Debian package bubblewrap)"
    if mode == "bwrap":
        raise ConfigError(f"is bwrap, but {problem}; install bubblewrap or use auto", "tools.exec.sandbox")
    return HostShell(host.environ, host.secrets, problem)
