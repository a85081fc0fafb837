"""What start-up and the first turn load: only what the configured model and channels need."""

import asyncio
import os
import sys
from pathlib import Path

from tests.fakes.openai_server import FakeLLM


def loaded_after(*argv: str) -> str:
    """Python code that runs the CLI with `argv` and prints the top-level modules it loaded."""
    return (
        f"import sys\nsys.argv = ['relaybot', *{list(argv)!r}]\nfrom bot.cli import main\n"
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
