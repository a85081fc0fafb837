"""Issue 40 on Telegram, end to end: a guest sends a Word document and a workbook and asks about them."""

import re
from collections.abc import Callable
from pathlib import Path

from tests.fakes.openai_server import FakeLLM, Reply, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.files.samples import docx_file, xlsx_file
from tests.support.gateway import TelegramBot

GUEST = 77
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def reader(arguments: dict[str, str]) -> Callable[[dict], Reply]:
    """A model that reads the file named in the user's message with read_document, then repeats what it read."""

    def answer(body: dict) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Text("I read: " + last["content"])
        file_id = re.search(r"\bf_[0-9a-f]{8}\b", str(last["content"])).group(0)  # type: ignore[union-attr]
        return ToolCalls((("read_document", {"file_id": file_id, **arguments}),))

    return answer


async def test_a_guest_asks_about_a_word_document_and_a_workbook(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    plan = docx_file(
        tmp_path / "plan.docx", "Garden plan", ["Plant tomatoes in May."], [["Bed", "Crop"], ["N", "Beans"]]
    )
    runs = xlsx_file(tmp_path / "runs.xlsx", {"Week": [["Day", "Minutes"], ["Mon", 31]], "Month": [["May", 412]]})
    async with TelegramBot(tmp_path, fake_llm, telegram, telegram_options={"dm_policy": "open"}):
        fake_llm.default = reader({})
        telegram.document(
            plan.read_bytes(),
            file_name="plan.docx",
            mime_type=DOCX,
            caption="what is planted?",
            chat_id=GUEST,
            user_id=GUEST,
        )
        (word,) = await telegram.wait_for_sent(1)
        fake_llm.default = reader({"sheet": "Month"})
        telegram.document(
            runs.read_bytes(),
            file_name="runs.xlsx",
            mime_type=XLSX,
            caption="how far in May?",
            chat_id=GUEST,
            user_id=GUEST,
        )
        excel = (await telegram.wait_for_sent(2))[1]
    assert "plan.docx: Word document" in word["text"] and "Plant tomatoes in May." in word["text"]
    assert "Beans" in word["text"]
    assert "runs.xlsx: Excel workbook" in excel["text"] and "412" in excel["text"] and "| Mon |" not in excel["text"]
    asked = str(fake_llm.requests[0]["messages"][-1]["content"])
    assert re.search(r"\[attached file: f_[0-9a-f]{8} plan\.docx \(" + re.escape(DOCX), asked)
