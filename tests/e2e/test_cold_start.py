"""What start-up and the first turn load: only what the configured model and channels need."""

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bot.app.gateway import Gateway
from bot.config.paths import control_socket
from bot.llm.provider import ModelProvider
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.harness import make_config


def loaded_after(*argv: str) -> str:
    """Python code that runs the CLI with `argv` and prints the top-level modules it loaded."""
    return (
        f"import sys\nsys.argv = ['relaybot', *{list(argv)!r}]\nfrom bot.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )


async def test_a_fast_path_turn_is_metered_without_importing_litellm(tmp_path: Path, fake_llm: FakeLLM) -> None:
    (tmp_path / "config.yaml").write_text(
        f"llm:\n  model: openai/fake-model\n  api_key: sk-test\n  api_base: {fake_llm.base_url}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAYBOT_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        loaded_after("chat", "-m", "hello"),
        env={**env, "RELAYBOT_HOME": str(tmp_path)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    out = stdout.decode()
    assert out.startswith("echo: ") and "\nhello\n" in out, stderr.decode()
    loaded = out.rsplit("LOADED", 1)[1].split()
    assert "litellm" not in loaded and "openai" not in loaded


class HeldWarmUp:
    """The real provider, whose warm-up records what was connected when it began and waits to be let go."""

    def __init__(self, provider: ModelProvider, gateway: Callable[[], Gateway]) -> None:
        self.model = provider.model
        self.chat = provider.chat
        self.aclose = provider.aclose
        self._provider = provider
        self._gateway = gateway
        self.began = asyncio.Event()
        self.release = asyncio.Event()
        self.connected_then: dict[str, bool] = {}

    async def warm_up(self) -> None:
        self.connected_then = self._gateway().manager.connected()
        self.began.set()
        await self.release.wait()
        await self._provider.warm_up()


async def test_channels_connect_before_the_model_warms_up_and_the_scheduler_after_it(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with FakeTelegram() as telegram:
        section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}
        config = make_config(tmp_path, fake_llm, owners=["telegram:42"], channels={"telegram": section})
        gateways: list[Gateway] = []
        provider = HeldWarmUp(ModelProvider(config.llm), lambda: gateways[0])
        gateways.append(Gateway(config, provider))  # type: ignore[arg-type]
        gateway = gateways[0]
        starting = asyncio.create_task(gateway.start())
        try:
            await asyncio.wait_for(provider.began.wait(), 10)
            assert provider.connected_then == {"telegram": True}
            assert not control_socket(config).exists()  # the scheduler (with the control socket) waits for the model
            assert not starting.done()
            provider.release.set()
            await asyncio.wait_for(starting, 10)
            assert control_socket(config).exists()
        finally:
            provider.release.set()
            await asyncio.gather(starting, return_exceptions=True)
            await gateway.stop()


def test_the_composition_root_imports_no_library_a_tool_or_the_scheduler_loads_on_use() -> None:
    code = "import sys\nimport bot.app.serve\nprint(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(result.stdout.split())
    assert not loaded & {
        "aiohttp",
        "yarl",
        "sqlalchemy",
        "apscheduler",
        "litellm",
        "httpx",
        "telegram",
        "tokenizers",
        "safetensors",
    }


def test_help_loads_no_chat_library_of_the_open_protocols() -> None:
    result = subprocess.run([sys.executable, "-c", loaded_after("--help")], capture_output=True, text=True, check=True)
    loaded = set(result.stdout.rsplit("LOADED", 1)[1].split())
    assert "relaybot" in result.stdout.lower() and not loaded & {"pydle", "slixmpp"}
