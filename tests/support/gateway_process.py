"""`relaybot run` as a real subprocess against the fake Telegram and the fake LLM, to be killed and restarted."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram


class GatewayProcess:
    """One relaybot home; `start` spawns a gateway on it, `kill` SIGKILLs it, `stop` SIGTERMs it."""

    def __init__(self, home: Path, llm: FakeLLM, telegram: FakeTelegram, owners: list[int], **config: Any) -> None:
        self.home = home
        self.telegram = telegram
        self.process: asyncio.subprocess.Process | None = None
        home.mkdir(parents=True, exist_ok=True)
        data: dict[str, Any] = {
            "owners": [f"telegram:{owner}" for owner in owners],
            "llm": {"model": "openai/fake-model", "api_key": "sk-test", "api_base": llm.base_url, "timeout": 30},
            "heartbeat": {"enabled": False},
            "shutdown_grace": "2s",
            "channels": {"telegram": {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}},
        }
        for key, value in config.items():
            data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
        (home / "config.yaml").write_text(yaml.safe_dump(data))

    @property
    def state(self) -> Path:
        return self.home / "state"

    async def start(self, timeout: float = 30.0) -> None:
        """Spawn `relaybot run` and return once it polls Telegram."""
        polls = self._polls()
        await self.spawn()
        await self.telegram.wait_for_call("getUpdates", polls + 1, timeout)

    async def spawn(self) -> None:
        """Spawn `relaybot run` and return at once (a standby on the redis bus does not poll until it leads)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAYBOT_")}
        env.update(RELAYBOT_HOME=str(self.home), LITELLM_LOCAL_MODEL_COST_MAP="True")
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "--log-level",
            "info",
            "run",
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )

    def _polls(self) -> int:
        return sum(1 for method, _ in self.telegram.calls if method == "getUpdates")

    async def kill(self) -> None:
        """SIGKILL: no cleanup runs, as in a power cut of the process."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()
        self.process = None

    async def stop(self) -> str:
        """SIGTERM and wait; returns stderr."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(self.process.communicate(), 30)
        self.process = None
        return err.decode()

    def session_lines(self) -> dict[str, list[dict]]:
        """Every session file parsed line by line (json.loads raises on a torn or corrupt line)."""
        files = sorted((self.state / "sessions").glob("*.jsonl"))
        return {path.name: [json.loads(line) for line in path.read_text().splitlines() if line] for path in files}
