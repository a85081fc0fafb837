"""relaybot as a child process in tests: its environment, a minimal config, one CLI call."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from bot.storage.private_file import write_private
from tests.fakes.openai_server import FakeLLM


def env_for(home: Path) -> dict[str, str]:
    """This process's environment without RELAYBOT_ settings, with `home` as the relaybot home and litellm offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAYBOT_")}
    return {**env, "RELAYBOT_HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def write_config(home: Path, fake: FakeLLM) -> Path:
    """A config in `home` with only the model, pointed at the fake server, private as `relaybot init` writes it."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    write_private(path, f"llm:\n  model: openai/fake-model\n  api_key: sk-test\n  api_base: {fake.base_url}\n")
    return path


async def run_cli(home: Path, *args: str) -> tuple[int, str, str]:
    """Run `relaybot *args` on `home` to its end: the exit status, stdout and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        env=env_for(home),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()
