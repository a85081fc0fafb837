import re
from pathlib import Path

from bot.agent.context.attachments import describe_attachment
from bot.bus import Attachment
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.files.samples import pdf_pages
from tests.support.gateway import OWNER, TelegramBot


def saved(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / "inbox" / "telegram" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_code_sent_as_octet_stream_is_inlined_by_its_suffix(tmp_path: Path) -> None:
    path = saved(tmp_path, "f1.py", b"print('hello')\n")
    note = describe_attachment(Attachment(str(path), "application/octet-stream"), tmp_path, 20_000)
    assert "print('hello')" in note and note.startswith("[attached file inbox/telegram/f1.py")


def test_long_text_is_cut_with_a_note(tmp_path: Path) -> None:
    path = saved(tmp_path, "f2.md", b"# Notes\n" + b"x" * 500)
    note = describe_attachment(Attachment(str(path), "text/markdown"), tmp_path, 100)
    assert "x" * 92 in note and "x" * 93 not in note
    assert "[the rest is cut: only the first 100 characters are shown]" in note


def test_pdf_text_is_extracted(tmp_path: Path) -> None:
    path = saved(tmp_path, "f3.pdf", pdf_pages(["Invoice 4711 total 99 EUR"]))
    note = describe_attachment(Attachment(str(path), "application/pdf"), tmp_path, 20_000)
    assert "Invoice 4711 total 99 EUR" in note


def test_binary_files_are_described_by_their_workspace_path(tmp_path: Path) -> None:
    path = saved(tmp_path, "f4.zip", b"PK\x03\x04\0\0binary")
    note = describe_attachment(Attachment(str(path), "application/zip"), tmp_path, 20_000)
    assert note == "[attached file: inbox/telegram/f4.zip (application/zip); the owner's file tools can open it]"


async def test_a_guest_csv_reaches_the_model_and_other_files_land_in_the_workspace(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    guest = 77
    async with TelegramBot(tmp_path, fake_llm, telegram, telegram_options={"dm_policy": "open"}) as bot:
        telegram.document(
            b"date,amount\n2026-01-02,12.50\n",
            file_name="costs.csv",
            mime_type="text/csv",
            caption="sum this",
            chat_id=guest,
            user_id=guest,
        )
        await telegram.wait_for_sent(1)
        telegram.document(
            b"PK\x03\x04\0\0zip", file_name="photos.zip", mime_type="application/zip", chat_id=OWNER, user_id=OWNER
        )
        await telegram.wait_for_sent(2)
        inbox = bot.config.workspace / "inbox" / "telegram" / str(OWNER)
    guest_text = fake_llm.requests[0]["messages"][-1]["content"]
    assert "2026-01-02,12.50" in guest_text and "sum this" in guest_text
    owner_text = fake_llm.requests[1]["messages"][-1]["content"]
    assert [p.suffix for p in inbox.iterdir()] == [".zip"]
    assert re.search(r"\[attached file: f_[0-9a-f]{8} photos\.zip \(application/zip\); read_document reads", owner_text)
