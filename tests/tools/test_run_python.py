"""run_python in the real bubblewrap: files in and out; the limits stop forks, loops, full disks and network."""

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from bot.app.channel_kinds import upload_limits
from bot.bus import ChatRef, OutboundMessage, Trust
from bot.errors import ToolError
from bot.files.records import FileBook
from bot.tools.base import ToolContext
from bot.tools.chat_files import ChatFiles
from bot.tools.run_python import RunPythonTool
from bot.tools.sandbox.python_sandbox import PythonLimits, available_libraries, python_sandbox
from bot.usage.charge import Charge, charged_to
from bot.usage.ledger import UsageLedger
from bot.usage.python_time import PythonTime
from tests.support.polling import until

pytestmark = pytest.mark.skipif(
    python_sandbox(PythonLimits()) is None, reason="bubblewrap is not installed or cannot run here"
)


class Chat:
    """A user's chat with run_python: its files, its context, what was sent to it, and the ledger."""

    def __init__(self, tmp_path: Path, limits: PythonLimits, daily_seconds: float | None = None) -> None:
        self.workspace = tmp_path / "workspace"
        self.files = ChatFiles(FileBook(tmp_path / "files.db"), self.workspace)
        self.ledger = UsageLedger(tmp_path / "usage.db")
        self.sent: list[OutboundMessage] = []
        meter = PythonTime(self.ledger, {Trust.USER: daily_seconds}, "UTC")
        sandbox = python_sandbox(limits)
        assert sandbox is not None
        self.tool = RunPythonTool(sandbox, self.files, self.workspace, meter, available_libraries(), upload_limits())

        async def send(message: OutboundMessage) -> None:
            self.sent.append(message)

        memory = self.workspace / "memory" / "chats" / "telegram_5"
        self.ctx = ToolContext(ChatRef("telegram", "5"), "5", Trust.USER, "turn", send, memory_dir=memory)

    async def run(self, code: str, **args: object) -> str:
        with charged_to(Charge(chat=ChatRef("telegram", "5"), sender="telegram:5", role=Trust.USER)):
            return await self.tool.run({"code": code, **args}, self.ctx)


def quick(**limits: object) -> PythonLimits:
    return PythonLimits(**{"seconds": 10.0, "memory_mb": 256, "processes": 16, "disk_mb": 20, **limits})  # type: ignore[arg-type]


async def test_code_reads_a_named_file_and_what_it_writes_comes_back_as_the_chats_file(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick())
    source = tmp_path / "AgAD.csv"
    source.write_text("minutes\n31\n29\n")
    data = chat.files.register(chat.ctx.memory_dir, chat.ctx.chat, source, "runs.csv")
    code = (
        "import csv\nrows = [int(r['minutes']) for r in csv.DictReader(open('runs.csv'))]\n"
        "print('average', sum(rows) / len(rows))\nopen('summary.txt', 'w').write('avg 30')\n"
    )
    result = await chat.run(code, files=[data.id], send=True)
    assert "average 30.0" in result and "[exit code 0]" in result
    (made,) = [
        r for r in chat.files.book.listing(chat.files.scope(chat.ctx.memory_dir, chat.ctx.chat)) if r.origin == "made"
    ]
    assert made.name == "summary.txt" and made.path.read_text() == "avg 30" and made.id in result
    assert [Path(f.path).read_text() for f in chat.sent[0].files] == ["avg 30"]
    assert source.read_text() == "minutes\n31\n29\n"  # the code had a copy
    (row,) = chat.ledger.calls()
    assert row.purpose == "python" and row.sender == "telegram:5" and row.latency > 0


async def test_output_is_reported_as_the_code_prints_it(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick())
    reported: list[str] = []
    chat.ctx = replace(chat.ctx, progress=reported.append)
    result = await chat.run("import time\nprint('first')\ntime.sleep(1)\nprint('second')\n")
    assert "".join(reported) == "first\nsecond\n"
    assert "second" not in reported[0]  # the first line came on its own: not held back until the code ended
    assert "first\nsecond" in result


async def test_the_code_sees_nothing_of_the_host_but_the_system(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick())
    secret = tmp_path / "workspace" / "memory" / "MEMORY.md"
    secret.parent.mkdir(parents=True)
    secret.write_text("secret")
    code = (
        f"import os\nprint(os.path.exists({str(secret)!r}), os.getcwd(), sorted(os.listdir('.')))\nopen('/usr/x', 'w')"
    )
    result = await chat.run(code)
    assert "False /scratch []" in result and "Read-only file system" in result


async def test_a_fork_bomb_is_stopped_by_the_process_limit(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick(seconds=5.0))
    result = await chat.run("import os\nwhile True:\n    os.fork()\n")
    assert "Resource temporarily unavailable" in result or "[killed" in result


async def test_an_endless_loop_is_killed_at_the_time_limit(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick(seconds=1.0))
    result = await chat.run("while True:\n    pass\n")
    assert "[killed" in result


async def test_filling_the_disk_stops_at_the_scratch_folders_size(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick(disk_mb=4))
    code = "n = 0\nwhile True:\n    open(f'fill{n}', 'wb').write(b'x' * 1_000_000)\n    n += 1\n"
    result = await chat.run(code)
    assert "No space left on device" in result


async def test_the_network_cannot_be_reached_not_even_the_hosts_loopback(tmp_path: Path) -> None:
    connected: list[object] = []
    server = await asyncio.start_server(lambda r, w: connected.append(w), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    chat = Chat(tmp_path, quick())
    code = (
        "import socket\nfor host in ('127.0.0.1', '1.1.1.1'):\n    try:\n"
        f"        socket.create_connection((host, {port}), timeout=2)\n        print(host, 'reached')\n"
        "    except OSError as exc:\n        print(host, 'refused', exc)\n"
    )
    result = await chat.run(code)
    server.close()
    assert "127.0.0.1 refused" in result and "1.1.1.1 refused" in result and connected == []


async def test_memory_past_the_limit_is_refused(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick(memory_mb=128))
    result = await chat.run("block = bytearray(1024 * 1024 * 1024)\nprint('allocated')")
    assert "MemoryError" in result and "allocated" not in result


async def test_a_role_without_seconds_left_today_runs_nothing(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick(), daily_seconds=0.0)
    with pytest.raises(ToolError, match="run_python is not available to this sender's role"):
        await chat.run("print(1)")
    assert chat.ledger.calls() == []


async def test_another_chats_file_id_is_no_such_file(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick())
    other = tmp_path / "other.txt"
    other.write_text("theirs")
    record = chat.files.register(
        tmp_path / "workspace" / "memory" / "chats" / "telegram_6", ChatRef("telegram", "6"), other
    )
    with pytest.raises(ToolError, match="no such file"):
        await chat.run("print(open('other.txt').read())", files=[record.id])


async def test_a_plot_comes_back_as_a_png(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick(seconds=30.0, memory_mb=512))
    code = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.savefig('plot.png')\n"
    result = await chat.run(code, send=True)
    assert "plot.png (image/png" in result
    assert Path(chat.sent[0].files[0].path).read_bytes().startswith(b"\x89PNG")


async def test_code_that_sleeps_is_killed_at_the_wall_clock_limit(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick(seconds=1.0))
    result = await chat.run("import time\nprint('waiting', flush=True)\ntime.sleep(120)")
    assert "waiting" in result and "[killed after 1 s: the code did not finish in time]" in result
    (row,) = chat.ledger.calls()
    assert row.outcome == "timeout" and row.latency < 30


async def test_a_stopped_run_leaves_nothing_running(tmp_path: Path) -> None:
    chat = Chat(tmp_path, quick(seconds=60.0))
    running = asyncio.ensure_future(chat.run("import time\ntime.sleep(120)"))
    await until(lambda: bool(sandboxes()), timeout=10)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    # bwrap's inner process is in a session of its own (--new-session): the kernel kills it, by its parent-death
    # signal (--die-with-parent), a moment after the outer bwrap the run killed and reaped
    await until(lambda: not sandboxes(), timeout=10)


def sandboxes() -> list[str]:
    """Running processes of a run_python job: bwrap (the job folder in its arguments) and the driver it runs."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().decode(errors="replace") if entry.name.isdigit() else ""
        except OSError:
            continue
        if "relaybot-python-" in line or "/job/driver.py" in line:
            found.append(line)
    return found


def test_a_python_living_under_tmp_is_bound_over_the_sandboxes_own_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from bot.tools.sandbox.python_sandbox import PythonSandbox

    monkeypatch.setattr(sys, "prefix", "/tmp/checkout/.venv")
    argv = PythonSandbox("bwrap").argv(Path("/tmp/job"), 3)
    tmpfs = next(n for n in range(len(argv)) if argv[n : n + 2] == ["--tmpfs", "/tmp"])
    venv = "/tmp/checkout/.venv"
    bound = next(n for n in range(len(argv)) if argv[n : n + 3] == ["--ro-bind", venv, venv])
    assert tmpfs < bound
