"""Issues 25 and 26 on Discord, end to end: the real discord.py and agent against the fake Discord and model."""

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.access.pairing import PairingBook
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.gateway import OWNER, DiscordBot

MEMBER = 55
STRANGER = 77
EXEC_ALWAYS_ASKS = {"exec": {"sandbox": "off", "approval": "always"}}


@asynccontextmanager
async def running(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord, options: dict[str, Any] | None = None, **overrides: Any
) -> AsyncIterator[DiscordBot]:
    async with DiscordBot(tmp_path, fake_llm, discord, options, **overrides) as bot:
        await bot.gateway.manager.ready("discord")
        yield bot


async def pair(bot: DiscordBot, discord: FakeDiscord, user_id: int) -> None:
    """The user asks in a DM and the owner approves their pairing code."""
    discord.dm("hello?", user_id=user_id)
    await discord.wait_until(lambda: any("pairing code" in s["content"] for s in discord.sent), "a pairing code")
    code = re.search(r"pairing code is ([A-Z2-9]{8})", discord.sent[-1]["content"]).group(1)
    assert PairingBook(bot.config.state_dir / "pairing.json").approve("discord", code) == str(user_id)


async def with_buttons(discord: FakeDiscord) -> dict:
    """The first message the bot posted with buttons under it."""
    await discord.wait_until(lambda: any(s.get("components") for s in discord.sent), "a message with buttons")
    return next(s for s in discord.sent if s.get("components"))


async def bot_says(discord: FakeDiscord, text: str) -> dict:
    """Once one of the bot's messages reads `text` (posted so, or edited to it as a live reply): that message."""

    def showing() -> list[dict]:
        return [m for s in discord.sent if (m := discord.interactions.messages[int(s["id"])])["content"] == text]

    await discord.wait_until(lambda: bool(showing()), f"a message saying {text!r}")
    return showing()[0]


def buttons(message: dict) -> dict[str, str]:
    """A message's buttons: label -> custom_id."""
    return {b["label"]: b["custom_id"] for row in message["components"] for b in row["components"]}


def user_text(request: dict) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


async def test_an_exec_approval_is_decided_by_the_owners_press_and_not_by_a_members(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord, tools=EXEC_ALWAYS_ASKS) as bot:
        await pair(bot, discord, MEMBER)
        ran = bot.config.workspace / "ran.txt"
        fake_llm.script(ToolCalls((("exec", {"command": "touch ran.txt"}),)), Text("Done."))
        discord.guild_message("make the file", user_id=OWNER, mention_bot=True)
        prompt = await with_buttons(discord)
        assert list(buttons(prompt)) == ["Allow once", "Allow always", "Deny"]
        allow_once = buttons(prompt)["Allow once"]

        discord.press(prompt, allow_once, user_id=MEMBER)
        await discord.wait_until(lambda: bool(discord.interactions.followups), "the member told")
        (notice,) = discord.interactions.followups
        assert notice["ephemeral"] and notice["content"].startswith("Not yours")
        assert not ran.exists() and len(fake_llm.requests) == 1 and not discord.interactions.original_edits
        assert discord.interactions.messages[int(prompt["id"])]["components"] == prompt["components"]

        discord.press(prompt, allow_once, user_id=OWNER)
        await bot_says(discord, "Done.")
        acknowledgements = discord.interactions.callbacks
        assert [c["type"] for c in acknowledgements] == [6, 6] and all(c["after"] < 3 for c in acknowledgements)
        shown = discord.interactions.messages[int(prompt["id"])]
        assert shown["content"] == "Run `touch ran.txt`?\nAllowed once by User42." and shown["components"] == []
        assert ran.exists() and len(discord.interactions.followups) == 1


async def test_an_approval_decided_by_typing_loses_its_buttons_and_a_late_press_hears_it_is_closed(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord, tools=EXEC_ALWAYS_ASKS):
        fake_llm.script(ToolCalls((("exec", {"command": "true"}),)), Text("Done."))
        discord.dm("run true", user_id=OWNER)
        prompt = await with_buttons(discord)
        code = re.search(r"Reply /approve (\w+)", prompt["content"]).group(1)  # type: ignore[union-attr]
        discord.dm(f"/approve {code}", user_id=OWNER)
        closed = await bot_says(discord, "Run `true`?\nAllowed once by User42 (typed).")
        assert closed["id"] == prompt["id"] and closed["components"] == []
        await bot_says(discord, "Done.")
        discord.press(prompt, buttons(prompt)["Deny"], user_id=OWNER)
        await discord.wait_until(lambda: bool(discord.interactions.followups), "the presser told")
        (notice,) = discord.interactions.followups
        assert notice["ephemeral"] and notice["content"] == "This question is closed."


async def a_colour_question(fake_llm: FakeLLM, discord: FakeDiscord) -> dict:
    """The owner asks; the model asks back with `ask_user` (red or green): the message showing its buttons."""
    ask = ("ask_user", {"question": "Which colour?", "options": ["red", "green"]})
    fake_llm.script(ToolCalls((ask,)), Text("Green it is."))
    discord.dm("pick a colour", user_id=OWNER)
    return await with_buttons(discord)


async def test_ask_user_answered_by_typing_loses_its_buttons(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord):
        prompt = await a_colour_question(fake_llm, discord)
        discord.dm("green", user_id=OWNER)
        closed = await bot_says(discord, "Which colour?\n→ green (User42, typed)")
        assert closed["id"] == prompt["id"] and closed["components"] == []
        await bot_says(discord, "Green it is.")


async def test_an_ask_user_press_is_the_answer_the_model_receives(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord):
        prompt = await a_colour_question(fake_llm, discord)
        assert prompt["content"] == "Which colour?" and list(buttons(prompt)) == ["red", "green"]
        discord.press(prompt, buttons(prompt)["green"], user_id=OWNER)
        await bot_says(discord, "Green it is.")
    tool_results = [m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_results == ["User42 answered: green"]
    assert discord.interactions.messages[int(prompt["id"])]["components"] == []


async def test_model_and_new_slash_commands_are_answered_through_their_interactions(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    models = {"models": [{"name": "openai/fast-model", "alias": "fast"}]}
    async with running(tmp_path, fake_llm, discord, llm=models):
        discord.command("model", user_id=OWNER)
        await discord.wait_until(lambda: bool(discord.interactions.original_edits), "the picker")
        (menu,) = discord.interactions.original_edits
        picker = discord.interactions.messages[int(menu["id"])]
        assert "- fast: openai/fast-model" in picker["content"] and list(buttons(picker)) == ["fast", "default"]
        discord.press(picker, buttons(picker)["fast"], user_id=OWNER)
        await discord.wait_until(lambda: len(discord.interactions.original_edits) == 2, "the choice shown")
        assert picker["content"] == "This chat now uses openai/fast-model (fast), chosen by User42."
        assert picker["components"] == []

        discord.guild_message("which model are you?", user_id=OWNER, mention_bot=True)
        await fake_llm.wait_for_requests(1)
        discord.command("new", user_id=OWNER)
        await discord.wait_until(lambda: len(discord.interactions.original_edits) == 3, "the /new answer")
    assert [c["type"] for c in discord.interactions.callbacks] == [5, 6, 5]
    assert all(c["after"] < 3 for c in discord.interactions.callbacks)
    assert fake_llm.requests[0]["model"] == "fast-model"  # /new's archive may consolidate memory after it
    assert "new conversation" in discord.interactions.original_edits[2]["content"].lower()
    assert not discord.interactions.followups


async def test_a_reply_brings_the_quoted_text_and_its_author_even_when_discord_did_not_resolve_it(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord):
        said = discord.guild_message("the deploy broke at noon", user_id=STRANGER)
        discord.guild_message("why?", user_id=OWNER, mention_bot=True, reply_to=said)
        await fake_llm.wait_for_requests(1)
        discord.guild_message("and who said it?", user_id=OWNER, mention_bot=True, reply_to=said, resolve_reply=False)
        await fake_llm.wait_for_requests(2)
    for request in fake_llm.requests:
        asked = user_text(request)
        assert f"replying to a message from User{STRANGER} ({STRANGER})" in asked
        assert "the deploy broke at noon" in asked
    assert discord.fetched == [int(said["id"])]


async def test_a_mention_brings_the_unmentioned_lines_before_it_in_one_model_call(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord, {"group_policy": "mention", "allow_from": [MEMBER]}):
        discord.guild_message("the build is red again", user_id=MEMBER)
        discord.guild_message("since the lint change", user_id=OWNER)
        discord.guild_message("can you look?", user_id=OWNER, mention_bot=True)
        await discord.wait_for_sent(1)
    (request,) = fake_llm.requests
    asked = user_text(request)
    assert "since you last spoke" in asked and asked.endswith("can you look?")
    assert f"untrusted message from User{MEMBER} ({MEMBER})" in asked and "the build is red again" in asked
    assert f"User{OWNER} ({OWNER}): since the lint change" in asked


async def test_an_edited_question_is_answered_again_in_the_earlier_reply(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord, {"on_edit": "rerun"}):
        fake_llm.script(Text("It is 5."), Text("It is 6."))
        asked = discord.dm("what is 2+3?", user_id=OWNER)
        reply = await bot_says(discord, "It is 5.")
        discord.edit(asked, "what is 2+4?")
        await bot_says(discord, "It is 6.")
    assert len(discord.sent) == 1 and discord.edits[-1]["id"] == reply["id"]
    assert user_text(fake_llm.requests[1]).endswith("what is 2+4?")


async def test_reactions_show_seen_then_done_when_answered(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    fake_llm.script(Text("Hi there."))
    async with running(tmp_path, fake_llm, discord, {"reactions": "status"}):
        asked = discord.guild_message("hello", user_id=OWNER, mention_bot=True)
        await bot_says(discord, "Hi there.")
        await discord.wait_until(lambda: len(discord.reactions) == 3, "the answer marked done")
    marked = int(asked["id"])
    assert discord.reactions == [("add", marked, "👀"), ("remove", marked, "👀"), ("add", marked, "✅")]


async def test_application_commands_are_registered_at_start_globally_or_instead_in_the_command_guilds(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord):
        await discord.wait_until(lambda: discord.interactions.command_puts == [None], "global commands")
        global_names = {c["name"] for c in discord.interactions.commands[None]}
    assert {"new", "stop", "status", "model", "usage", "help", "approve", "deny", "activation"} <= global_names
    permissions = {c["name"]: c["default_member_permissions"] for c in discord.interactions.commands[None]}
    assert permissions["approve"] == permissions["activation"] == "0"  # in servers, for administrators only
    assert permissions["new"] is None and permissions["help"] is None
    async with running(tmp_path, fake_llm, discord, {"command_guilds": [discord.guild_id]}):
        await discord.wait_until(lambda: len(discord.interactions.command_puts) == 3, "guild commands, globals gone")
    assert discord.interactions.command_puts == [None, discord.guild_id, None]
    guild_names = {c["name"] for c in discord.interactions.commands[discord.guild_id]}
    assert guild_names <= global_names and "activation" in guild_names
    assert discord.interactions.commands[None] == []  # else the server would list every command twice


async def test_a_slash_command_from_someone_not_served_is_never_left_thinking(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    async with running(tmp_path, fake_llm, discord):
        discord.command("new", user_id=STRANGER)
        await discord.wait_until(lambda: bool(discord.interactions.deleted), "the guild response withdrawn")
        discord.command("new", user_id=STRANGER, dm=True)
        await discord.wait_until(lambda: bool(discord.interactions.original_edits), "the DM response filled")
    (withdrawn,) = discord.interactions.deleted
    (answered,) = discord.interactions.original_edits
    assert "pairing code is" in answered["content"] and not discord.sent and not fake_llm.requests
    assert withdrawn["message_id"] == "@original"
