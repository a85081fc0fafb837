"""A model per chat: /model shows and switches it (owners and admins), the choice persists and the turns use it."""

from pathlib import Path

from bot.bus import Press, Trust
from bot.chats.settings import LocalChatSettings
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.harness import Harness

MODELS = {"models": [{"name": "openai/big-model", "alias": "big"}, {"name": "openai/small-model", "alias": "small"}]}


def harness(tmp_path: Path, fake: FakeLLM) -> Harness:
    return Harness(tmp_path, fake, llm={**MODELS, "model": "openai/fake-model", "api_base": fake.base_url})


async def test_model_lists_the_offered_models_as_buttons_with_the_current_one(tmp_path: Path) -> None:
    async with FakeLLM() as fake, harness(tmp_path, fake) as bot:
        menu = await bot.reply_to(await bot.send("/model", trust=Trust.USER))
        assert menu.text.startswith("Model: openai/fake-model (default)")
        assert "- big: openai/big-model" in menu.text
        assert [c.id for c in menu.choices] == ["big", "small", "default"]
        assert menu.prompt_id == "model"
    assert fake.requests == []


async def test_switching_persists_for_the_chat_and_its_turns_use_the_model(tmp_path: Path) -> None:
    async with FakeLLM() as fake, harness(tmp_path, fake) as bot:
        assert await bot.ask("/model big") == "This chat now uses openai/big-model (big)."
        fake.script(Text("hi from big"), Text("hi from default"))
        assert await bot.ask("hello") == "hi from big"
        assert await bot.ask("hello", chat="test:2") == "hi from default"
        status = await bot.ask("/status")
        assert "Model: openai/big-model (chosen for this chat as big)" in status
    assert [r["model"] for r in fake.requests] == ["big-model", "fake-model"]
    assert LocalChatSettings(tmp_path / "state" / "chat_settings.db").get("test:1").model == "big"
    async with FakeLLM() as fake, harness(tmp_path, fake) as bot:
        fake.script(Text("still big"))
        assert await bot.ask("again") == "still big"
        assert await bot.ask("/model default") == "This chat uses the default model again: openai/fake-model."
        fake.script(Text("default again"))
        assert await bot.ask("and now") == "default again"
    assert [r["model"] for r in fake.requests] == ["big-model", "fake-model"]


async def test_the_ledger_records_the_chosen_model(tmp_path: Path) -> None:
    async with FakeLLM() as fake, harness(tmp_path, fake) as bot:
        await bot.ask("/model small")
        fake.script(Text("tiny"))
        await bot.ask("hello")
        models = {group.key for group in bot.app.ledger.grouped("model", 0)}
    assert "openai/small-model" in models


async def test_only_owners_and_admins_switch_and_unknown_aliases_are_named(tmp_path: Path) -> None:
    async with FakeLLM() as fake, harness(tmp_path, fake) as bot:
        assert "Only the bot's owners and admins" in await bot.ask("/model big", trust=Trust.USER)
        assert "No model is called 'huge' (models: big, small; or default)" in await bot.ask("/model huge")
        assert "Model: openai/fake-model (default)" in await bot.ask("/model", trust=Trust.ADMIN)
        assert await bot.ask("/model small", trust=Trust.ADMIN) == "This chat now uses openai/small-model (small)."


async def test_a_press_on_the_picker_switches_and_shows_who_chose(tmp_path: Path) -> None:
    async with FakeLLM() as fake, harness(tmp_path, fake) as bot:
        await bot.send("small", press=Press("model", "small", "m-3"), sender="u5", trust=Trust.USER)
        refused = await bot.wait_for(lambda out: out.private_to == "u5")
        assert "Only the bot's owners and admins" in refused.text
        await bot.send("small", press=Press("model", "small", "m-3"), sender_name="Ada")
        shown = await bot.wait_for(lambda out: out.edit_of == "m-3")
        assert shown.text == "This chat now uses openai/small-model (small), chosen by Ada."
        fake.script(Text("small here"))
        assert await bot.ask("hi") == "small here"
    assert [r["model"] for r in fake.requests] == ["small-model"]


async def test_threads_follow_their_chats_model_unless_they_choose_their_own(tmp_path: Path) -> None:
    async with FakeLLM() as fake, harness(tmp_path, fake) as bot:
        await bot.ask("/model big", chat="slack:C1")
        await bot.ask("/model default", chat="slack:C1:2.0")
        await bot.ask("/model small", chat="slack:C1:3.0")
        fake.script(Text("in a thread"), Text("back to default"), Text("own choice"))
        await bot.ask("hello", chat="slack:C1:1.0")
        await bot.ask("hello", chat="slack:C1:2.0")
        await bot.ask("hello", chat="slack:C1:3.0")
    assert [r["model"] for r in fake.requests] == ["big-model", "fake-model", "small-model"]


async def test_a_model_at_its_own_server_does_not_get_the_llm_key(tmp_path: Path) -> None:
    async with FakeLLM() as main, FakeLLM() as other:
        offered = [{"name": "openai/other-model", "alias": "other", "api_base": other.base_url}]
        llm = {"models": offered, "model": "openai/fake-model", "api_base": main.base_url, "api_key": "sk-main"}
        async with Harness(tmp_path, main, llm=llm) as bot:
            await bot.ask("/model other")
            other.script(Text("hi from the other server"))
            assert await bot.ask("hello") == "hi from the other server"
    assert [auth for path, auth in other.authorizations if path.endswith("/chat/completions")] == [None]
