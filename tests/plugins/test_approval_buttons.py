"""Approvals with buttons: presses decide at once, only those allowed decide, and Allow always is remembered."""

from pathlib import Path

from bot.bus import InboundMessage, OutboundMessage, Press, Trust
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness

EXEC_OFF_SANDBOX = {"exec": {"sandbox": "off"}}


async def ask_for_rm(bot: Harness, fake: FakeLLM) -> tuple[InboundMessage, OutboundMessage]:
    (bot.config.workspace / "junk").mkdir(exist_ok=True)
    fake.script(ToolCalls((("exec", {"command": "rm -r junk"}),)), Text("Done."))
    message = await bot.send("clean up junk")
    prompt = await bot.wait_for(lambda out: out.prompt_id is not None and out.text.startswith("Run"), timeout=60)
    return message, prompt


async def press(bot: Harness, prompt: OutboundMessage, choice: str, **fields: object) -> InboundMessage:
    label = next(c.label for c in prompt.choices if c.id == choice)
    assert prompt.prompt_id is not None
    return await bot.send(label, press=Press(prompt.prompt_id, choice, "msg-7"), **fields)  # type: ignore[arg-type]


async def test_the_prompt_offers_three_buttons_and_a_press_decides_at_once(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX) as bot:
        message, prompt = await ask_for_rm(bot, fake)
        assert [(c.id, c.label) for c in prompt.choices] == [
            ("once", "Allow once"),
            ("always", "Allow always"),
            ("deny", "Deny"),
        ]
        assert f"/approve {prompt.prompt_id}" in prompt.text
        await press(bot, prompt, "once", sender_name="Ada")
        decided = await bot.wait_for(lambda out: out.edit_of == "msg-7")
        assert decided.text == "Run `rm -r junk`?\nAllowed once by Ada."
        assert decided.choices == ()
        assert (await bot.reply_to(message)).text == "Done."
    assert not (bot.config.workspace / "junk").exists()


async def test_a_press_by_someone_not_allowed_changes_nothing_and_only_they_are_told(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX) as bot:
        message, prompt = await ask_for_rm(bot, fake)
        await press(bot, prompt, "once", sender="u9", trust=Trust.USER)
        notice = await bot.wait_for(lambda out: out.private_to == "u9")
        assert notice.text.startswith("Not yours")
        assert (bot.config.workspace / "junk").exists() and len(fake.requests) == 1
        await press(bot, prompt, "deny")
        assert (await bot.wait_for(lambda out: out.edit_of == "msg-7")).text.endswith("Denied by u1.")
        await bot.reply_to(message)
    assert (bot.config.workspace / "junk").exists()


async def test_admins_decide_when_approvals_by_admin(tmp_path: Path) -> None:
    async with (
        FakeLLM() as fake,
        Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX, approvals={"by": "admin"}) as bot,
    ):
        message, prompt = await ask_for_rm(bot, fake)
        await press(bot, prompt, "once", sender="a1", trust=Trust.ADMIN)
        assert (await bot.reply_to(message)).text == "Done."
    assert not (bot.config.workspace / "junk").exists()


async def test_allow_always_remembers_the_exact_command_across_restarts(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX) as bot:
        message, prompt = await ask_for_rm(bot, fake)
        await press(bot, prompt, "always")
        await bot.reply_to(message)
        assert bot.app.stores.allow_list().entries() == ["rm -r junk"]
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX) as bot:
        (bot.config.workspace / "junk").mkdir()
        fake.script(ToolCalls((("exec", {"command": "rm -r junk"}),)), Text("Done again."))
        assert await bot.ask("clean up junk") == "Done again."
        assert not any(out.prompt_id for out in bot.outbox)
        (bot.config.workspace / "other").mkdir()
        fake.script(ToolCalls((("exec", {"command": "rm -r other"}),)), Text("Asked."))
        await bot.send("clean up other")
        assert (await bot.wait_for(lambda out: out.prompt_id is not None)).text.startswith("Run `rm -r other`")


async def test_typed_approve_always_also_remembers(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX) as bot:
        message, prompt = await ask_for_rm(bot, fake)
        assert await bot.ask(f"/approve {prompt.prompt_id} always") == "Approved always: `rm -r junk`."
        await bot.reply_to(message)
        assert bot.app.stores.allow_list().allows("rm -r junk")


async def test_a_press_on_a_prompt_no_longer_waiting_is_dropped_without_a_turn(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX) as bot:
        await bot.send("Allow once", press=Press("ZZZ", "once", "m1"))
        fake.script(Text("pong"))
        assert await bot.ask("ping") == "pong"
        assert len(fake.requests) == 1


async def test_a_typed_approve_replaces_the_prompt_without_its_buttons(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=EXEC_OFF_SANDBOX) as bot:
        message, prompt = await ask_for_rm(bot, fake)
        await bot.send(f"/approve {prompt.prompt_id}", sender_name="Ada")
        closed = await bot.wait_for(lambda out: out.prompt_id == prompt.prompt_id and not out.choices)
        assert closed.text == "Run `rm -r junk`?\nAllowed once by Ada (typed)." and closed.edit_of is None
        assert (await bot.reply_to(message)).text == "Done."


async def test_a_timed_out_prompt_is_replaced_and_a_late_press_hears_it_is_closed(tmp_path: Path) -> None:
    tools = {"exec": {"sandbox": "off", "approval_timeout": "200ms"}}
    async with FakeLLM() as fake, Harness(tmp_path, fake, tools=tools) as bot:
        message, prompt = await ask_for_rm(bot, fake)
        closed = await bot.wait_for(lambda out: out.prompt_id == prompt.prompt_id and not out.choices)
        assert closed.text == "Run `rm -r junk`?\nTimed out, not run."
        await bot.reply_to(message)
        await press(bot, prompt, "once")
        notice = await bot.wait_for(lambda out: out.private_to == "u1")
        assert notice.text == "This question is closed."
    assert (bot.config.workspace / "junk").exists()
