"""Cold start: `relaybot run` launched → connected to Telegram → first reply, over several runs.

Run from the repository root: python bench/cold_start.py [--runs 5]

Each run also times `python -c "import litellm"` (the price map offline), the yardstick issue 50 sets the first
reply against.

Each run launches `python -m bot run` in a fresh process with a home made by `relaybot init`,
Telegram pointed at the fake Bot API and the model at the fake OpenAI server (0 s latency), both
served by this process. "Connected" is the bot's first getUpdates poll; at that moment the owner
sends "hello", and "first reply" is the bot's sendMessage answering it. The bot's bytecode is
compiled first, as a pip install does.

The floor, launched just before each run against its own fake: a bare python-telegram-bot script
that does what the channel must before it polls (import, build the application, getMe,
deleteWebhook, getUpdates) and nothing else. Load on this shared machine hits both alike, so the
ratio of the two says more than either time; each process's CPU to connect is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rig import ROOT, init_home, write_config

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram


def cpu_seconds(pid: int) -> float:
    """User + system CPU the process has used so far (Linux /proc), to set wall time against machine load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


BARE_PTB = """
import asyncio, sys
from telegram.ext import Application

async def main():
    app = Application.builder().token(sys.argv[1]).base_url(sys.argv[2]).updater(None).build()
    await app.initialize()
    await app.bot.delete_webhook(drop_pending_updates=False)
    await app.bot.get_updates(timeout=30)

asyncio.run(main())
"""


async def floor_run() -> tuple[float, float]:
    """Launch → first getUpdates of the bare python-telegram-bot script; its CPU by then."""
    async with FakeTelegram() as telegram:
        launched = time.perf_counter()
        command = [sys.executable, "-c", BARE_PTB, telegram.token, telegram.base_url]
        process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        try:
            await telegram.wait_for_call("getUpdates", timeout=60)
            connected = time.perf_counter() - launched
            cpu = cpu_seconds(process.pid)
        finally:
            process.terminate()
            await asyncio.to_thread(process.wait, 30)
    return connected, cpu


def litellm_import() -> tuple[float, float]:
    """Launch → exit of `python -c "import litellm"` (offline price map), the yardstick issue 50 sets a first
    reply against, and the CPU it used."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    launched = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import litellm"], env=env, check=True, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - launched
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


async def one_run(home: Path, telegram: FakeTelegram) -> tuple[float, float, float, float]:
    env = {**os.environ, "RELAYBOT_HOME": str(home), "RELAYBOT_CONFIG": str(home / "config.yaml")}
    launched = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "bot", "run"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        await telegram.wait_for_call("getUpdates", timeout=60)
        connected = time.perf_counter() - launched
        cpu = cpu_seconds(process.pid)
        telegram.text("hello")
        await telegram.wait_for_sent(1, timeout=60)
        replied = time.perf_counter() - launched
        reply_cpu = cpu_seconds(process.pid)
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 30)
    return connected, replied, cpu, reply_cpu


async def main(runs: int) -> None:
    # An installed relaybot has its bytecode compiled (pip does it); a checkout run with
    # PYTHONDONTWRITEBYTECODE would recompile every module on each launch instead.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "bot", "channels"], cwd=ROOT, check=True)
    samples = []
    yardsticks: list[tuple[float, float, float]] = []  # `import litellm` alone (wall, CPU), the bot's CPU to reply
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs):
            floor, floor_cpu = await floor_run()
            litellm, litellm_cpu = await asyncio.to_thread(litellm_import)
            async with FakeTelegram() as telegram, FakeLLM() as llm:
                home = Path(tmp) / f"home{run}"
                config_file = init_home(home)
                section = {"enabled": True, "token": telegram.token, "api_base": telegram.base_url}
                write_config(config_file, llm.base_url, channels={"telegram": section}, owners=["telegram:42"])
                connected, replied, cpu, reply_cpu = await one_run(home, telegram)
            samples.append((connected, replied, cpu, floor, floor_cpu))
            yardsticks.append((litellm, litellm_cpu, reply_cpu))
            print(
                f"run {run + 1}: launch → connected {connected:.2f} s ({cpu:.2f} s CPU of the bot process;"
                f" bare python-telegram-bot {floor:.2f} s, {floor_cpu:.2f} s CPU),"
                f" launch → first reply {replied:.2f} s (reply {replied - connected:.2f} s after connecting;"
                f" {replied / litellm:.2f}× `import litellm` alone, {litellm:.2f} s; CPU {reply_cpu:.2f} s,"
                f" {reply_cpu / litellm_cpu:.2f}× its {litellm_cpu:.2f} s);"
                f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
            )
    median = statistics.median
    connected = [c for c, *_ in samples]
    after = [r - c for c, r, *_ in samples]
    floor = [f for *_, f, _ in samples]
    print(
        f"median over {runs} runs: launch → connected {median(connected):.2f} s"
        f" (bare python-telegram-bot {median(floor):.2f} s, ratio {median(c / f for c, *_, f, _ in samples):.2f}×),"
        f" launch → first reply {median(r for _, r, *_ in samples):.2f} s,"
        f" connected → first reply {median(after):.2f} s (worst {max(after):.2f} s),"
        f" CPU to connect {median(c for _, _, c, *_ in samples):.2f} s"
        f" (bare python-telegram-bot {median(fc for *_, fc in samples):.2f} s)"
    )
    ratio = median(r / y for (_, r, *_), (y, _, _) in zip(samples, yardsticks, strict=True))
    cpu_ratio = median(bot / alone for _, alone, bot in yardsticks)
    print(
        f"launch → first reply against `import litellm` alone ({median(y for y, _, _ in yardsticks):.2f} s):"
        f" {ratio:.2f}× wall, {cpu_ratio:.2f}× CPU (target ≤ 0.35×; 0.49× at issue 50's start, 0.40× before wave 4)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="launches to time")
    asyncio.run(main(parser.parse_args().runs))
