"""run_python: code in the sandbox with copies of the chat's files it names; what it wrote comes back as files."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import signal
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.bus import OutboundMessage
from bot.errors import BudgetExceeded, ToolError
from bot.tools.base import Tool, ToolContext
from bot.tools.chat_files import ChatFiles, file_label
from bot.tools.outbox_files import outbox_attachment, save_to_outbox
from bot.tools.sandbox.python_sandbox import DRIVER, PythonSandbox
from bot.tools.shell import CappedOutput
from bot.tools.uploads import UploadLimits
from bot.usage.python_time import PythonTime

MAX_TAR_BYTES = 24 * 1024 * 1024  # the driver returns up to 20 MB of files; the rest of the stream is dropped
KEEP_BYTES = 6000


@dataclass(frozen=True, slots=True)
class Run:
    """What one run left: its output, its exit code (None when it was killed at the timeout) and its files."""

    stdout: str
    stderr: str
    code: int | None
    files: dict[str, bytes]


class RunPythonTool(Tool):
    """Runs code in bubblewrap under the limits; each run is metered in seconds against the role's daily limit."""

    name = "run_python"

    def __init__(
        self,
        sandbox: PythonSandbox,
        files: ChatFiles,
        workspace: Path,
        meter: PythonTime,
        libraries: list[str],
        uploads: UploadLimits,
    ) -> None:
        self._sandbox = sandbox
        self._uploads = uploads
        self._files = files
        self._workspace = workspace
        self._meter = meter
        limits = sandbox.limits
        have = f"it can import {', '.join(libraries)}" if libraries else "the standard library only"
        self.description = (
            f"Run Python 3 in a sandbox without network ({limits.seconds:g} s, {limits.memory_mb} MB; {have}). "
            "`files` (file_ids) are copied into its folder by name; files it writes become this chat's files."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "code": {"type": "string", "minLength": 1},
                "files": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
                "send": {"type": "boolean", "description": "Send the written files to this chat."},
            },
            "required": ["code"],
        }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        records = [await self._files.get(ctx, str(file_id)) for file_id in dict.fromkeys(args.get("files") or [])]
        try:
            self._meter.check()
        except BudgetExceeded as exc:
            raise ToolError(exc.user_message) from exc
        started, outcome = time.monotonic(), "cancelled"
        try:
            with tempfile.TemporaryDirectory(prefix="relaybot-python-") as folder:
                job = Path(folder)
                await asyncio.to_thread(_prepare, job, str(args["code"]), [(r.name, r.path) for r in records])
                run = await self._execute(job, ctx.progress)
                outcome = "ok" if run.code == 0 else "timeout" if run.code is None else f"exit {run.code}"
        finally:
            self._meter.record(time.monotonic() - started, outcome)
        return await self._report(run, ctx, bool(args.get("send")))

    async def _execute(self, job: Path, progress: Callable[[str], None]) -> Run:
        read_end, write_end = os.pipe()
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *self._sandbox.argv(job, write_end),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(write_end,),
                start_new_session=True,
            )
        )
        try:
            process = await asyncio.shield(starting)
        except asyncio.CancelledError:  # stopped while starting: what started still dies
            await _kill(await starting)
            raise
        finally:
            os.close(write_end)
        stdout, stderr = CappedOutput(KEEP_BYTES), CappedOutput(KEEP_BYTES)
        collected = asyncio.ensure_future(asyncio.to_thread(_read_capped, read_end))
        killed = False
        try:
            async with asyncio.timeout(self._sandbox.limits.seconds + 2):
                assert process.stdout is not None and process.stderr is not None
                drains = _drain(process.stdout, stdout, progress), _drain(process.stderr, stderr, progress)
                await asyncio.gather(*drains, process.wait())
        except TimeoutError:
            killed = True
        finally:
            if process.returncode is None:
                await _kill(process)
        written = await collected
        code = None if killed else process.returncode
        return Run(stdout.text(), stderr.text(), code, _unpack(written))

    async def _report(self, run: Run, ctx: ToolContext, send: bool) -> str:
        lines = [f"stdout:\n{run.stdout.rstrip()}" if run.stdout.strip() else "stdout: (empty)"]
        if run.stderr.strip():
            lines.append(f"stderr:\n{run.stderr.rstrip()}")
        if run.code is None:
            lines.append(f"[killed after {self._sandbox.limits.seconds:g} s: the code did not finish in time]")
        elif run.code < 0 or run.code > 128:  # bwrap reports a child killed by signal n as 128 + n
            number = -run.code if run.code < 0 else run.code - 128
            lines.append(f"[killed by signal {number}: a limit (CPU time, memory, processes or disk) was passed]")
        else:
            lines.append(f"[exit code {run.code}]")
        records = []
        for name, data in run.files.items():
            stem, suffix = os.path.splitext(name)
            path = await asyncio.to_thread(save_to_outbox, self._workspace, ctx.chat, stem or "file", suffix, data)
            records.append(await self._files.made(ctx, path, name))
        if records:
            lines.append("Files written (now this chat's files):\n" + "\n".join(f"- {file_label(r)}" for r in records))
        if records and send:
            if not self._uploads.takes_files(ctx.chat):
                lines.append("[this chat cannot receive files; tell the user their names]")
            else:
                attachments = tuple(outbox_attachment(r.path, r.mime_type) for r in records[:10])
                await ctx.send(
                    OutboundMessage(ctx.chat, "", in_reply_to=ctx.turn_id, kind="progress", files=attachments)
                )
                lines.append(f"[sent {len(attachments)} file(s) to this chat]")
        return "\n".join(lines)


def _prepare(job: Path, code: str, inputs: list[tuple[str, Path]]) -> None:
    """The job folder: the driver, the code, and copies of the named files."""
    files = job / "files"
    files.mkdir()
    shutil.copyfile(DRIVER, job / "driver.py")
    (job / "main.py").write_text(code, encoding="utf-8")
    for name, source in inputs:
        shutil.copyfile(source, files / os.path.basename(name))


async def _kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL bwrap's group and reap it: the sandbox's own pid 1 dies with bwrap, and everything in it with that."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


async def _drain(stream: asyncio.StreamReader, output: CappedOutput, progress: Callable[[str], None]) -> None:
    """Keep a stream's output, reporting each piece as it arrives."""
    while chunk := await stream.read(65536):
        output.add(chunk)
        progress(chunk.decode("utf-8", errors="replace"))


def _read_capped(fd: int) -> bytes:
    """Everything the driver writes to `fd`, keeping at most MAX_TAR_BYTES (the rest is read and dropped)."""
    kept = bytearray()
    with os.fdopen(fd, "rb") as stream:
        while chunk := stream.read(65536):
            if len(kept) < MAX_TAR_BYTES:
                kept += chunk[: MAX_TAR_BYTES - len(kept)]
    return bytes(kept)


def _unpack(data: bytes) -> dict[str, bytes]:
    """The regular files in the driver's tar stream, by a flat safe name; a broken stream yields what came whole."""
    files: dict[str, bytes] = {}
    with contextlib.suppress(tarfile.TarError, EOFError), tarfile.open(fileobj=io.BytesIO(data), mode="r|") as archive:
        for member in archive:
            handle = archive.extractfile(member) if member.isfile() else None
            if handle is not None:
                name = member.name.replace("/", "_").lstrip(".") or "file"
                files[name] = handle.read()
    return files
