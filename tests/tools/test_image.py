"""generate_image end to end: the model asks, litellm draws at the fake, the picture lands in the outbox and chat."""

import stat
from pathlib import Path

from bot.bus import Trust
from tests.fakes.openai_server import PNG_PIXEL, FakeLLM, Text, ToolCalls
from tests.support.harness import Harness
from tests.support.model_requests import tool_names

IMAGE = {"model": "openai/gpt-image-1", "quality": "low"}
LITELLM_IMPORT = 60.0  # the first picture imports litellm (chat goes the direct route), slow on a busy machine


async def test_a_drawn_picture_is_saved_privately_in_the_outbox_sent_as_a_photo_and_metered(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(ToolCalls((("generate_image", {"prompt": "a duck", "caption": "Your duck"}),)), Text("Done."))
    async with Harness(tmp_path, fake_llm, tools={"image": IMAGE}) as bot:
        asked = await bot.send("draw a duck", chat="telegram:5", sender="5", trust=Trust.ADMIN)
        assert (await bot.reply_to(asked, timeout=LITELLM_IMPORT)).text == "Done."
        (photo,) = [message for message in bot.outbox if message.files]
        calls = bot.app.ledger.calls()
    (attachment,) = photo.files
    path = Path(attachment.path)
    assert path.parent == bot.config.workspace / "outbox" / "telegram" / "5" and path.suffix == ".png"
    assert path.read_bytes() == PNG_PIXEL and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (attachment.kind, attachment.mime_type, photo.text) == ("image", "image/png", "Your duck")
    (row,) = [call for call in calls if call.purpose == "image"]
    assert (row.sender, row.model, row.cost_usd) == ("telegram:5", "openai/gpt-image-1", 0.011)
    assert fake_llm.image_requests[0]["prompt"] == "a duck"


async def test_off_until_a_model_is_set_and_then_for_owners_and_admins_only(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path / "off", fake_llm) as bot:
        await bot.ask("hi")
    async with Harness(tmp_path / "on", fake_llm, tools={"image": IMAGE}) as bot:
        await bot.ask("hi")
        await bot.ask("hi", chat="telegram:6", sender="6", trust=Trust.USER)
    off, owner, user = (tool_names(request) for request in fake_llm.requests)
    assert "generate_image" not in off and "generate_image" in owner and "generate_image" not in user


async def test_pictures_count_against_the_senders_budget(tmp_path: Path, fake_llm: FakeLLM) -> None:
    draw = ("generate_image", {"prompt": "a duck"})
    fake_llm.script(ToolCalls((draw, draw)), Text("never asked"))
    budgets = {"senders": {"telegram:5": {"daily_usd": 0.01}}}  # one 1.1-cent picture uses it up
    async with Harness(tmp_path, fake_llm, tools={"image": IMAGE}, budgets=budgets) as bot:
        asked = await bot.send("draw two", chat="telegram:5", sender="5", trust=Trust.ADMIN)
        reply = await bot.reply_to(asked, timeout=LITELLM_IMPORT)
        (row,) = [call for call in bot.app.ledger.calls() if call.purpose == "image"]
    assert len(fake_llm.image_requests) == 1 and row.cost_usd == 0.011
    assert reply.kind == "error" and "budget" in reply.text and len(fake_llm.requests) == 1
