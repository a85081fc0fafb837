"""Issue 40 on Telegram, end to end: a user asks for a plot; run_python writes a PNG in the sandbox and it arrives."""

from pathlib import Path

import pytest

from bot.tools.sandbox.python_sandbox import PythonLimits, python_sandbox
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram, Upload
from tests.support.gateway import TelegramBot

pytestmark = pytest.mark.skipif(
    python_sandbox(PythonLimits()) is None, reason="bubblewrap is not installed or cannot run here"
)
USER = 55
# A 2x1 PNG written with the standard library alone, so the test needs no matplotlib.
PLOT = """
import struct, zlib
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
pixels = zlib.compress(b'\\x00\\xff\\x00\\x00\\x00\\x00\\xff')
png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 2, 1, 8, 2, 0, 0, 0))
png += chunk(b'IDAT', pixels) + chunk(b'IEND', b'')
open('runs.png', 'wb').write(png)
print('plotted', len(png), 'bytes')
"""


async def test_a_user_asks_for_a_plot_and_receives_the_png(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, roles={f"telegram:{USER}": "user"}) as bot:
        fake_llm.script(ToolCalls((("run_python", {"code": PLOT, "send": True}),)), Text("Here is your plot."))
        telegram.text("plot my running times", chat_id=USER, user_id=USER)
        await telegram.wait_until(lambda: any(s.get("text") == "Here is your plot." for s in telegram.sent), "reply")
        (photo,) = [s["photo"] for s in telegram.sent if "photo" in s]
        tools = [t["function"]["name"] for t in fake_llm.requests[0]["tools"]]
        result = fake_llm.requests[1]["messages"][-1]["content"]
        ledger_rows = [row for row in bot.gateway.agent.ledger.calls() if row.purpose == "python"]
    assert isinstance(photo, Upload) and photo.content.startswith(b"\x89PNG")
    assert "run_python" in tools and "plotted" in result and "runs.png (image/png" in result
    assert [row.sender for row in ledger_rows] == [f"telegram:{USER}"]


async def test_a_guest_is_not_offered_run_python(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, telegram_options={"dm_policy": "open"}):
        telegram.text("plot something", chat_id=77, user_id=77)
        await telegram.wait_for_sent(1)
    tools = [t["function"]["name"] for t in fake_llm.requests[0]["tools"]]
    assert "run_python" not in tools and "read_document" in tools
