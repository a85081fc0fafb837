"""The exec tool: a shell command in the workspace (in a sandbox where one runs), bounded in time and output."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bot.errors import ToolError
from bot.tools.base import Tool, ToolContext
from bot.tools.protected import ProtectedPaths
from bot.tools.sandbox.exec_sandbox import Launcher

KEEP_BYTES = 8000
REDACTED = "[redacted]"
_SEGMENT_BREAK = re.compile(r";|&&|\|\||[|&\n()`]|\$\(")
_FORK_BOMB = re.compile(r"(?P<f>[\w:]+)\s*\(\)\s*\{\s*(?P=f)\s*\|\s*(?P=f)\s*&\s*;?\s*\}")
_DISK_REDIRECT = re.compile(r">\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk)")
_WRAPPERS = frozenset({"sudo", "doas", "command", "exec", "nohup", "nice", "env", "time"})
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr")
_ROOT_OR_HOME = frozenset(
    {"/", "//", "/*", "/.", "~", "~/", "~/*", "~/.", "$HOME", "$HOME/", "$HOME/*", "${HOME}", "${HOME}/", "${HOME}/*"}
)


def deny_reason(command: str) -> str | None:
    """Why the deny list blocks `command` (an obvious system destroyer), or None."""
    if _FORK_BOMB.search(command):
        return "it is a fork bomb"
    if _DISK_REDIRECT.search(command):
        return "it writes straight onto a disk device"
    for segment in _SEGMENT_BREAK.split(command):
        if reason := _segment_reason(_words(segment)):
            return reason
    return None


def _words(segment: str) -> list[str]:
    try:
        words = shlex.split(segment)
    except ValueError:
        words = segment.split()
    while words and (os.path.basename(words[0]) in _WRAPPERS or re.match(r"^\w+=", words[0])):
        words = words[1:]
    return words


def _segment_reason(words: list[str]) -> str | None:
    if not words:
        return None
    program, args = os.path.basename(words[0]), words[1:]
    if program in _POWER or (program == "init" and args[:1] in (["0"], ["6"])):
        return "it shuts down or reboots the machine"
    if program == "systemctl" and _POWER.union({"kexec"}).intersection(args):
        return "it shuts down or reboots the machine"
    if program.startswith("mkfs") or program == "mke2fs":
        return "it formats a filesystem"
    if program == "dd" and any(a.startswith("of=/dev/") and not a[3:].startswith(_HARMLESS_DEVICES) for a in args):
        return "it writes straight onto a device"
    names = [os.path.basename(word) for word in words]
    if "rm" in names:
        rm_args = words[names.index("rm") + 1 :]
        recursive = any(a == "--recursive" or (re.match(r"^-[a-zA-Z]+$", a) and "r" in a.lower()) for a in rm_args)
        if recursive and _ROOT_OR_HOME.intersection(rm_args):
            return "it recursively deletes the root or home folder"
    return None


class CappedOutput:
    """Keeps the first and last `keep` bytes of a stream and counts everything."""

    def __init__(self, keep: int = KEEP_BYTES) -> None:
        self._keep = keep
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._keep - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        self._tail += chunk
        if len(self._tail) > self._keep:
            del self._tail[: len(self._tail) - self._keep]

    def text(self) -> str:
        """The kept output; when some was dropped, a note in the middle says how much."""
        dropped = self.total - len(self._head) - len(self._tail)
        if not dropped:
            return (self._head + self._tail).decode("utf-8", errors="replace")
        shown = f"showing the first and last {self._keep:,}"
        note = f"[... {dropped:,} bytes omitted: {self.total:,} in total, {shown} ...]"
        head, tail = self._head.decode("utf-8", errors="replace"), self._tail.decode("utf-8", errors="replace")
        return f"{head}\n{note}\n{tail}"


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the process's whole group (its pid, as it started a new session) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


class ExecTool(Tool):
    """Runs a shell command through its launcher (sandbox or host); it dies whole at the timeout."""

    name = "exec"
    description = (
        "Run a shell command in the workspace and return its output (stdout and stderr) and exit code. "
        "Long output keeps its beginning and end. Prefer short, read-only commands."
    )
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The shell command to run."},
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": 3600,
                "description": "Seconds before it is killed.",
            },
        },
        "required": ["command"],
    }

    def __init__(
        self,
        workspace: Path,
        timeout: float,
        secrets: Iterable[str],
        launcher: Launcher,
        protected: ProtectedPaths | None = None,
    ) -> None:
        self._workspace = workspace
        self._timeout = timeout
        self._secrets = [secret for secret in secrets if secret]  # masked in the output: a second layer
        self._launcher = launcher
        self._protected = protected

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        command = args["command"]
        if reason := deny_reason(command):
            raise ToolError(
                f"refused: {reason}. exec's deny list blocks this command; if it is really wanted, "
                "the owner has to run it by hand."
            )
        timeout = args.get("timeout", self._timeout)
        rules_writable = self._protected is not None and self._protected.take(ctx.session_key, command)
        process = await self._spawn(command, rules_writable)
        output = CappedOutput()
        timed_out = False
        try:
            async with asyncio.timeout(timeout):
                assert process.stdout is not None
                while chunk := await process.stdout.read(65536):
                    output.add(chunk)
                    ctx.progress(self._masked(chunk.decode("utf-8", errors="replace")))
                await process.wait()
        except TimeoutError:
            timed_out = True
        finally:
            if timed_out or process.returncode is None:
                await _kill_group(process)  # also on cancellation (/stop): nothing it started outlives it
        return self._report(output, process.returncode, timeout if timed_out else None)

    async def _spawn(self, command: str, rules_writable: bool) -> asyncio.subprocess.Process:
        """Start the shell in its own process group; a cancellation during start-up still kills the group."""
        self._workspace.mkdir(parents=True, exist_ok=True)
        if self._protected is not None:
            self._protected.make_folders()
        launch = self._launcher.launch(command, rules_writable)
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *launch.argv,
                cwd=self._workspace,
                env=launch.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        )
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            await _kill_group(await starting)
            raise

    def _masked(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def _report(self, output: CappedOutput, code: int | None, timed_out_after: float | None) -> str:
        text = self._masked(output.text() or "(no output)")
        if timed_out_after is not None:
            status = f"[killed after {timed_out_after:g} s: the command did not finish in time]"
        elif code is not None and code < 0:
            status = f"[killed by signal {-code}]"
        else:
            status = f"[exit code {code}]"
        return f"{text.rstrip()}\n{status}"
