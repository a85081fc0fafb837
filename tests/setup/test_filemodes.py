import asyncio
import logging
import os
import stat
import sys
from pathlib import Path

import pytest

from bot.setup.filemodes import keep_private
from tests.fakes.openai_server import FakeLLM
from tests.support.cli_process import env_for, write_config


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def restore_umask() -> object:
    """keep_private sets the process umask; put the old one back afterwards."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_keep_private_strips_group_and_other_access_once(
    tmp_path: Path, restore_umask: object, caplog: pytest.LogCaptureFixture
) -> None:
    home, outside = tmp_path / "home", tmp_path / "outside.txt"
    (home / "state" / "sessions").mkdir(parents=True, mode=0o755)
    (home / "state" / "scheduler.db").write_text("db")
    (home / "state" / "scheduler.db").chmod(0o644)
    (home / "run.sh").write_text("#!/bin/sh\n")
    (home / "run.sh").chmod(0o755)
    outside.write_text("not ours")
    outside.chmod(0o644)
    (home / "link").symlink_to(outside)
    with caplog.at_level(logging.WARNING, logger="bot.setup.filemodes"):
        assert keep_private([home, home / "state"]) == 5  # home, state, sessions, scheduler.db, run.sh
        assert keep_private([home]) == 0
    assert [r.getMessage() for r in caplog.records] == [
        f"made 5 files and folders under {home} private (0700 folders, 0600 files)"
    ]
    assert mode(home) == mode(home / "state") == mode(home / "state" / "sessions") == 0o700
    assert mode(home / "state" / "scheduler.db") == 0o600
    assert mode(home / "run.sh") == 0o700
    assert mode(outside) == 0o644
    (home / "state" / "new.jsonl").write_text("{}")
    (home / "state" / "new").mkdir()
    assert mode(home / "state" / "new.jsonl") == 0o600 and mode(home / "state" / "new") == 0o700


async def cli(home: Path, *args: str) -> str:
    """Run relaybot in a child with the usual umask 022, as a shell would start it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, env=env_for(home), umask=0o022,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, stderr.decode()
    return stderr.decode()


async def test_everything_under_the_home_is_private_after_a_start(tmp_path: Path, fake_llm: FakeLLM) -> None:
    home = tmp_path / "home"
    config = write_config(home, fake_llm)
    config.write_text(config.read_text() + "channels:\n  telegram:\n    enabled: true\n    token: x\n")
    for path in (home / "workspace" / "memory", home / "state" / "sessions"):
        path.mkdir(parents=True, mode=0o755)
    for path in (home / "workspace" / "memory" / "MEMORY.md", home / "state" / "cron_runs.jsonl"):
        path.write_text("older file\n")
        path.chmod(0o644)
    home.chmod(0o755)
    await cli(home, "cron", "add", "--to", "telegram:1", "--every", "1d", "--remind", "stretch")
    assert mode(home / "state" / "scheduler.db") == 0o600
    await cli(home, "chat", "-m", "hello")
    warnings = (home / "state" / "logs" / "chat.log").read_text()  # the chat logs to a file, not the terminal
    assert warnings.count("private (0700 folders, 0600 files)") == 1
    seen = {path.relative_to(home).as_posix() for path in home.rglob("*")}
    assert {"state/sessions", "state/scheduler.db", "state/cron_runs.jsonl", "workspace/memory/MEMORY.md"} <= seen
    assert any(name.startswith("state/sessions/console") for name in seen)
    for path in [home, *home.rglob("*")]:
        assert mode(path) == (0o700 if path.is_dir() else 0o600), path
