"""Files on every platform: a file sent to the bot reaches the model, a file the bot sends arrives as an upload;
where chats carry no files (IRC), a file offered to the bot and one it sends are named in text instead."""

from pathlib import Path

from bot.bus import Attachment, OutboundMessage
from tests.channels.contract.gateways import user_texts
from tests.fakes.openai_server import FakeLLM
from tests.support.harness import GatewayUnderTest
from tests.support.platform import Platform


async def test_a_text_file_sent_to_the_bot_reaches_the_model(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    content = b"the launch code is 4217\n"
    platform.dm_file(content, "notes.txt", "text/plain", platform.owner)
    await platform.wait_sent(1)
    if not platform.carries_files:  # declared: the file cannot come, so the model is told what was offered
        assert "notes.txt" in user_texts(fake_llm)[0] and "4217" not in user_texts(fake_llm)[0]
        return
    assert "the launch code is 4217" in user_texts(fake_llm)[0]
    inbox = bot.config.workspace / "inbox" / platform.name
    (saved,) = [path for path in inbox.rglob("*") if path.is_file()]
    assert saved.suffix == ".txt" and saved.read_bytes() == content


async def test_a_file_the_bot_sends_is_uploaded_with_its_name(
    bot: GatewayUnderTest, tmp_path: Path, platform: Platform
) -> None:
    report = tmp_path / "report.txt"
    report.write_text("all systems nominal\n")
    files = (Attachment(str(report), "text/plain"),)
    message = OutboundMessage(platform.group_chat, "the report", files=files)
    await bot.gateway.agent.bus.publish_outbound(message)
    if not platform.carries_files:  # declared: no files in chats, so the file is named in a notice instead
        await platform.wait_sent(2)
        assert platform.sent()[0] == "the report" and "report.txt" in platform.sent()[1]
        assert platform.uploads() == []
        return
    if not platform.files_in_groups:  # declared: files go only to direct chats, and a group gets a line naming them
        await platform.wait_for(lambda: any("report.txt" in text for text in platform.sent()), "the file named")
        assert platform.uploads() == []
        message = OutboundMessage(platform.direct_chat(platform.owner), "the report", files=files)
        await bot.gateway.agent.bus.publish_outbound(message)
    await platform.wait_uploads(1)
    assert platform.uploads() == ["report.txt"]
