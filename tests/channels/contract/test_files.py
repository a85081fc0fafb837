"""Files on every platform: a file sent to the bot reaches the model, a file the bot sends arrives as an upload."""

from pathlib import Path

from bot.bus import Attachment, OutboundMessage
from tests.channels.contract.gateways import user_texts
from tests.fakes.openai_server import FakeLLM
from tests.harness import GatewayUnderTest
from tests.support.platform import Platform


async def test_a_text_file_sent_to_the_bot_reaches_the_model(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    content = b"the launch code is 4217\n"
    platform.dm_file(content, "notes.txt", "text/plain", platform.owner)
    await platform.wait_sent(1)
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
    if not platform.files_in_groups:  # declared: files go only to direct chats, and a group gets a line naming them
        await bot.gateway.agent.bus.publish_outbound(OutboundMessage(platform.group_chat, "the report", files=files))
        await platform.wait_for(lambda: any("report.txt" in text for text in platform.sent()), "the file named")
        assert platform.uploads() == []
    chat = platform.group_chat if platform.files_in_groups else platform.direct_chat(platform.owner)
    await bot.gateway.agent.bus.publish_outbound(OutboundMessage(chat, "the report", files=files))
    await platform.wait_uploads(1)
    assert platform.uploads() == ["report.txt"]
