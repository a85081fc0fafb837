"""The bench rig: the fake model in its own process, a home made by `relaybot init`, and a bot to ask."""

from __future__ import annotations

import asyncio
import math
import os
import re
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bot.bus import ChatRef, InboundMessage, OutboundMessage, Trust  # noqa: E402
from bot.config.loader import load_config  # noqa: E402
from bot.config.schema import Config  # noqa: E402
from tests.fakes.telegram_server import FakeTelegram  # noqa: E402

TOKEN = re.compile(r"\bq(\d+)q\b")  # how a bench names a message, so its reply can be matched
WINDOW = 65_536  # the context window the peers default to; the fake model reports none


class FakeProcess:
    """The fake model in a subprocess, off the measured CPU; `consolidating` also answers memory consolidation."""

    def __init__(self, latency: float = 0.0, consolidating: bool = False) -> None:
        self.latency = latency
        self.consolidating = consolidating
        self.process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def __enter__(self) -> FakeProcess:
        server = [str(ROOT / "bench" / "fake_model.py")] if self.consolidating else ["-m", "tests.fakes.openai_server"]
        command = [sys.executable, *server, "--latency", str(self.latency)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.process.stdout is not None
        port = int(self.process.stdout.readline().split()[1])
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self.process is not None
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:  # a loaded machine: kill it rather than hide what the bench raised
            self.process.kill()
            self.process.wait()


@dataclass(frozen=True)
class Checkout:
    """The code a bench's `relaybot` runs: a repository folder and the Python that runs it."""

    root: Path
    python: str

    @classmethod
    def at(cls, folder: Path) -> Checkout:
        """Another checkout of relaybot, run by its own `.venv` (its dependencies may differ from this one's)."""
        python = folder / ".venv" / "bin" / "python"
        if not python.exists():
            raise SystemExit(f"{folder} has no .venv/bin/python: make it (`python3 -m venv .venv`, `pip install -e .`)")
        return cls(folder.resolve(), str(python))


HERE = Checkout(ROOT, sys.executable)


def init_home(home: Path, code: Checkout = HERE) -> Path:
    """Run `relaybot init` of `code` into `home` as a user would; returns the config file."""
    env = {**os.environ, "RELAYBOT_HOME": str(home), "RELAYBOT_CONFIG": str(home / "config.yaml")}
    subprocess.run([code.python, "-m", "bot", "init"], cwd=code.root, env=env, check=True, capture_output=True)
    return home / "config.yaml"


def write_config(config_file: Path, base_url: str, **sections: Any) -> None:
    """Point the initialised config at the fake model, plus overrides: agent={...} merges, owners=[...] replaces."""
    import yaml

    data = yaml.safe_load(config_file.read_text()) or {}
    home = config_file.parent  # the paths `relaybot init` used there, whatever RELAYBOT_HOME this process has
    data.update({"workspace": str(home / "workspace"), "state_dir": str(home / "state")})
    llm = {"model": "openai/fake-model", "api_key": "sk-bench", "api_base": base_url, "context_window": WINDOW}
    data.setdefault("llm", {}).update(llm)
    for name, values in sections.items():
        if isinstance(values, dict):
            for key, value in values.items():
                merged = data.setdefault(name, {})
                if isinstance(value, dict) and isinstance(merged.get(key), dict):
                    merged[key].update(value)
                else:
                    merged[key] = value
        else:
            data[name] = values
    config_file.write_text(yaml.safe_dump(data))


def auto_recall_sections(enabled: bool | None) -> dict[str, Any]:
    """`write_config` sections switching auto-recall on or off; none for None: the code's own default (another
    checkout may not know the key)."""
    return {} if enabled is None else {"memory": {"auto_recall": {"enabled": enabled}}}


def bench_config(home: Path, base_url: str, **sections: Any) -> Config:
    """`relaybot init` in `home`, pointed at the fake; the loaded Config."""
    config_file = init_home(home)
    write_config(config_file, base_url, **sections)
    return load_config(config_file)


class Bot:
    """An AgentApp on its LocalBus, asked as a user would, replies matched by message id."""

    def __init__(self, config: Config) -> None:
        from bot.app.agent_wiring import AgentApp

        self.config = config
        self.app = AgentApp(config)
        self.waiters: dict[str, asyncio.Future[OutboundMessage]] = {}
        self._collector: asyncio.Task[None] | None = None
        self._stack = AsyncExitStack()  # the agent and its roster of one

    async def __aenter__(self) -> Bot:
        from bot.app.rosters import answering

        await self._stack.enter_async_context(answering(self.app))
        self._collector = asyncio.create_task(self._collect())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._collector is not None
        self._collector.cancel()
        await asyncio.gather(self._collector, return_exceptions=True)
        await self._stack.aclose()

    async def ask(self, chat: str, text: str, sender: str = "42", trust: Trust = Trust.OWNER) -> OutboundMessage:
        """Send as a user (the owner unless told) and wait for the reply."""
        message = InboundMessage(ChatRef.parse(chat), sender_id=sender, text=text, trust=trust)
        future: asyncio.Future[OutboundMessage] = asyncio.get_running_loop().create_future()
        self.waiters[message.id] = future
        await self.app.bus.publish_inbound(message)
        return await future

    async def _collect(self) -> None:
        while True:
            reply = await self.app.bus.consume_outbound()
            future = self.waiters.pop(reply.in_reply_to or "", None)
            if future and not future.done():
                future.set_result(reply)


def summary(samples: list[float]) -> str:
    """Mean, median and p99 in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
    return (
        f"mean {statistics.mean(samples) * 1000:6.2f} ms, median {statistics.median(samples) * 1000:6.2f} ms,"
        f" p99 {p99 * 1000:6.2f} ms"
    )


class TimedTelegram(FakeTelegram):
    """The fake Telegram, noting when each reply naming a message token (`q<n>q`) arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: dict[int, float] = {}
        self._arrival = asyncio.Event()

    def _record_sent(self, fields: dict, message: dict) -> dict:
        if found := TOKEN.search(str(fields.get("text", ""))):
            self.arrived.setdefault(int(found.group(1)), time.perf_counter())
            self._arrival.set()
        return super()._record_sent(fields, message)

    async def reply_to(self, n: int, timeout: float = 60) -> float:
        """When the reply to message `n` arrived, waiting for it."""
        async with asyncio.timeout(timeout):
            while n not in self.arrived:
                self._arrival.clear()
                await self._arrival.wait()
        return self.arrived[n]


def process_cpu(pid: int) -> float:
    """CPU seconds a process spent so far, all its threads, to the nanosecond (Linux schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
    return total / 1e9


def load_average() -> str:
    """The machine's 1-minute load average, printed beside each figure (the machine may be shared)."""
    return f"load {os.getloadavg()[0]:.2f}"


class RelaybotProcess:
    """`relaybot run --role ROLE` of `code` on a home's config, in its own process; its CPU readable meanwhile."""

    def __init__(
        self,
        home: Path,
        config_file: Path,
        role: str = "all",
        env: dict[str, str] | None = None,
        code: Checkout = HERE,
    ) -> None:
        env = {**os.environ, **(env or {}), "RELAYBOT_HOME": str(home), "RELAYBOT_CONFIG": str(config_file)}
        command = [code.python, "-m", "bot", "run", "--role", role]
        self.process = subprocess.Popen(
            command, cwd=code.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    @property
    def cpu(self) -> float:
        """CPU seconds the process used so far."""
        return process_cpu(self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
