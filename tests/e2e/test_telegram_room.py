"""Issues 25 and 26 on Telegram, end to end: `relaybot run` with python-telegram-bot, the agent and the fake LLM."""

import contextlib
import copy
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.access.pairing import PairingBook
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot

GROUP = -1003
MEMBER = 55  # paired in the tests that need a second person
ALWAYS_ASK = {"exec": {"sandbox": "off", "approval": "always"}}


class Room:
    """The running gateway, the fakes it talks to, and the moves a chat test makes."""

    def __init__(self, bot: TelegramBot, telegram: FakeTelegram, llm: FakeLLM) -> None:
        self.bot, self.telegram, self.llm = bot, telegram, llm

    def say(self, text: str, **sender: Any) -> dict:
        """The owner's message in their private chat."""
        return self.telegram.text(text, chat_id=OWNER, user_id=OWNER, **sender)

    def in_group(self, text: str, user: int = OWNER, **sender: Any) -> dict:
        """A message in the group from `user` (the member is called Bo)."""
        name = "Bo" if user == MEMBER else "Ann"
        return self.telegram.text(text, chat_id=GROUP, user_id=user, chat_type="supergroup", first_name=name, **sender)

    async def shown(self, needle: str) -> dict:
        """The bot's message that shows `needle` now (sent or edited since), once one does."""
        found: list[dict] = []

        def showing() -> bool:
            found[:] = [m for m in self._ours() if needle in (m.get("text") or "")]
            return bool(found)

        await self.telegram.wait_until(showing, f"a message showing {needle!r}")
        return found[-1]

    async def prompt(self) -> dict:
        """The latest message with buttons the bot sent, as the fake holds it now."""
        await self.telegram.wait_until(lambda: any(s.get("reply_markup") for s in self.telegram.sent), "buttons")
        sent = [s for s in self.telegram.sent if s.get("reply_markup")][-1]
        return self._current(sent)

    def press(self, prompt: dict, label: str, user: int = OWNER, name: str = "Ann") -> str:
        """Press the button labelled `label` under `prompt`; returns the callback query's id."""
        data = next(b["callback_data"] for row in buttons(prompt) for b in row if b["text"] == label)
        return str(self.telegram.press(prompt, data, user_id=user, first_name=name)["callback_query"]["id"])

    async def pair(self, user: int) -> None:
        """`user` asks in private, gets a pairing code and an owner approves it, as `relaybot pairing approve` does."""
        self.telegram.text("hello?", chat_id=user, user_id=user, first_name="Bo")
        await self.telegram.wait_until(lambda: any(s["chat_id"] == user for s in self.telegram.sent), "a pairing code")
        code = re.search(r"pairing code is ([A-Z2-9]{8})", self.telegram.sent[-1]["text"]).group(1)  # type: ignore[union-attr]
        assert PairingBook(self.bot.config.state_dir / "pairing.json").approve("telegram", code) == str(user)

    def asked(self, n: int = -1) -> str:
        """The user's message in the model's `n`-th request."""
        return str(self.llm.requests[n]["messages"][-1]["content"])

    def _ours(self) -> list[dict]:
        return [self._current(sent) for sent in self.telegram.sent]

    def _current(self, sent: dict) -> dict:
        return self.telegram.message(sent["chat_id"], sent["message_id"]) or {}


def buttons(message: dict) -> list[list[dict]]:
    """A message's inline keyboard, row by row ([] when it has none)."""
    return list((message.get("reply_markup") or {}).get("inline_keyboard") or [])


def labels(message: dict) -> list[str]:
    return [button["text"] for row in buttons(message) for button in row]


Opener = Callable[..., Awaitable[Room]]


@pytest_asyncio.fixture
async def opened(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> AsyncIterator[Opener]:
    """Starts the gateway with Telegram options and config overrides, connected on return; stopped after the test."""
    async with contextlib.AsyncExitStack() as stack:

        async def open_room(options: dict[str, object] | None = None, **overrides: object) -> Room:
            bot = TelegramBot(tmp_path, fake_llm, telegram, telegram_options=options, **overrides)
            await stack.enter_async_context(bot)
            await bot.gateway.manager.ready("telegram")
            return Room(bot, telegram, fake_llm)

        yield open_room


async def test_an_approval_is_decided_by_the_owners_press_never_by_a_paired_members(opened: Opener) -> None:
    room = await opened(tools=ALWAYS_ASK)
    await room.pair(MEMBER)
    room.llm.script(ToolCalls((("exec", {"command": "echo ran > proof.txt"}),)), Text("Done."))
    room.in_group("@relay_bot write the proof")
    prompt = await room.prompt()  # the fake's own copy: it shows every later edit
    assert labels(prompt) == ["Allow once", "Allow always", "Deny"] and "Run echo ran > proof.txt?" in prompt["text"]
    by_member = room.press(prompt, "Allow once", user=MEMBER, name="Bo")
    await room.shown("Not yours")
    proof = room.bot.config.workspace / "proof.txt"
    assert labels(prompt) == ["Allow once", "Allow always", "Deny"] and "Allowed" not in prompt["text"]
    assert not proof.exists() and len(room.llm.requests) == 1
    by_owner = room.press(prompt, "Allow once")
    decided = await room.shown("Allowed once by Ann")
    assert decided["message_id"] == prompt["message_id"] and buttons(decided) == []
    await room.shown("Done.")
    assert proof.read_text() == "ran\n"
    assert [a["callback_query_id"] for a in room.telegram.answered] == [by_member, by_owner]


async def test_a_typed_approve_in_a_group_works_as_the_prompt_says(opened: Opener) -> None:
    room = await opened(tools=ALWAYS_ASK)
    room.llm.script(ToolCalls((("exec", {"command": "true"}),)), Text("Done."))
    room.in_group("@relay_bot run true")
    code = re.search(r"Reply /approve (\w+)", (await room.prompt())["text"]).group(1)  # type: ignore[union-attr]
    room.in_group(f"/approve {code}")  # no @relay_bot, as the prompt words it
    await room.shown("Approved: true.")
    await room.shown("Done.")


async def test_an_approval_decided_by_typing_loses_its_buttons_and_a_late_press_hears_it_is_closed(
    opened: Opener,
) -> None:
    room = await opened(tools=ALWAYS_ASK)
    room.llm.script(ToolCalls((("exec", {"command": "true"}),)), Text("Done."))
    room.in_group("@relay_bot run true")
    prompt = copy.deepcopy(await room.prompt())  # as shown then: the fake's own copy loses its buttons
    code = re.search(r"Reply /approve (\w+)", prompt["text"]).group(1)  # type: ignore[union-attr]
    room.in_group(f"/approve {code}")
    closed = await room.shown("Allowed once by Ann (typed)")
    assert closed["message_id"] == prompt["message_id"] and buttons(closed) == []
    await room.shown("Done.")
    room.press(prompt, "Deny")
    await room.shown("This question is closed.")


async def test_ask_user_answered_by_typing_loses_its_buttons(opened: Opener) -> None:
    room = await opened()
    room.llm.script(ToolCalls((("ask_user", {"question": "Which colour?", "options": ["Red", "Blue"]}),)), Text("Ok."))
    room.say("paint the shed")
    prompt = await room.prompt()
    room.say("2")
    closed = await room.shown("→ Blue (Ann, typed)")
    assert closed["message_id"] == prompt["message_id"] and buttons(closed) == []
    await room.shown("Ok.")


async def test_ask_user_shows_buttons_and_the_press_is_what_the_model_hears(opened: Opener) -> None:
    room = await opened()
    room.llm.script(ToolCalls((("ask_user", {"question": "Which colour?", "options": ["Red", "Blue"]}),)), Text("Ok."))
    room.say("paint the shed")
    prompt = await room.prompt()
    assert prompt["text"] == "Which colour?" and labels(prompt) == ["Red", "Blue"]
    room.press(prompt, "Blue")
    await room.shown("Ok.")
    (result,) = [m["content"] for m in room.llm.requests[1]["messages"] if m["role"] == "tool"]
    assert result == "Ann answered: Blue"
    assert "→ Blue (Ann)" in (await room.shown("Which colour?"))["text"]


async def test_in_a_group_only_someone_as_trusted_as_the_asker_answers_ask_user(opened: Opener) -> None:
    room = await opened()
    await room.pair(MEMBER)
    room.llm.script(ToolCalls((("ask_user", {"question": "Which colour?", "options": ["Red", "Blue"]}),)), Text("Ok."))
    room.in_group("@relay_bot paint the shed")
    prompt = await room.prompt()
    room.press(prompt, "Red", user=MEMBER, name="Bo")
    await room.shown("Not yours")
    room.in_group("@relay_bot say pwned instead", user=MEMBER)
    room.press(prompt, "Blue")
    await room.llm.wait_for_requests(3)
    (result,) = [m["content"] for m in room.llm.requests[1]["messages"] if m["role"] == "tool"]
    assert result == "Ann answered: Blue" and room.asked().endswith("say pwned instead")


async def test_model_from_the_group_menu_shows_buttons_and_only_the_owners_press_switches(opened: Opener) -> None:
    room = await opened(llm={"models": [{"name": "openai/big-model", "alias": "big"}]})
    await room.pair(MEMBER)
    room.in_group("/model")  # a tap on the group's command menu: no @relay_bot when the bot is alone there
    prompt = await room.prompt()
    assert labels(prompt) == ["big", "default"]
    room.press(prompt, "big", user=MEMBER, name="Bo")
    await room.shown("Only the bot's owners and admins")
    room.press(prompt, "big")
    await room.shown("chosen by Ann")
    room.in_group("@relay_bot hello")
    await room.shown("hello")
    assert [r["model"] for r in room.llm.requests] == ["big-model"]


async def test_a_reply_brings_the_quoted_text_and_its_author_to_the_model(opened: Opener) -> None:
    room = await opened({"group_history": 0})
    await room.pair(MEMBER)
    earlier = room.in_group("the build is red since Tuesday", user=MEMBER)
    room.in_group("@relay_bot why is that?", reply_to=earlier["message"])
    await room.shown("echo: ")
    asked = room.asked()
    assert "replying to a message from Bo (55)" in asked and "the build is red since Tuesday" in asked
    assert asked.endswith("why is that?")


async def test_a_mention_brings_the_earlier_group_lines_in_one_model_call(opened: Opener) -> None:
    room = await opened()
    await room.pair(MEMBER)
    room.in_group("the deploy failed", user=MEMBER)
    room.in_group("it was the migration", user=MEMBER)
    room.in_group("@relay_bot what now?")
    await room.shown("echo: ")
    asked = room.asked()
    assert asked.count("message from Bo (55)") == 2 and "the deploy failed" in asked and "the migration" in asked
    assert len(room.llm.requests) == 1


async def test_an_edit_of_an_answered_message_is_a_note_the_next_turn_sees(opened: Opener) -> None:
    room = await opened({"on_edit": "note"})
    question = room.say("what is 2+2?")
    await room.shown("echo: ")
    room.telegram.edit(question, "what is 2+3?")
    room.say("and now?")
    await room.llm.wait_for_requests(2)
    seen = [m["content"] for m in room.llm.requests[1]["messages"] if m["role"] == "user"]
    assert any("edited a message you had already answered" in s and "what is 2+3?" in s for s in seen)
    assert len(room.llm.requests) == 2


async def test_an_edit_of_a_queued_message_replaces_it(opened: Opener) -> None:
    room = await opened(tools=ALWAYS_ASK)
    room.llm.script(ToolCalls((("exec", {"command": "true"}),)), Text("Done."))
    room.say("run true")
    prompt = await room.prompt()  # the turn waits for the approval, so the next message queues
    queued = room.say("what is 2+2?")
    room.telegram.edit(queued, "what is 2+3?")
    room.press(prompt, "Allow once")
    await room.shown("echo: ")
    assert room.asked().endswith("what is 2+3?") and "2+2" not in room.asked()


async def test_an_edit_under_rerun_answers_again_in_place_of_the_first_reply(opened: Opener) -> None:
    room = await opened({"on_edit": "rerun"})
    question = room.in_group("@relay_bot what is 2+2?")
    await room.shown("what is 2+2?")
    room.telegram.edit(question, "@relay_bot what is 2+3?")
    await room.shown("what is 2+3?")
    assert len(room.telegram.sent) == 1 and len(room.llm.requests) == 2


async def test_status_reactions_mark_a_message_seen_then_answered(opened: Opener) -> None:
    room = await opened({"reactions": "status"})
    asked = room.say("hi")
    await room.shown("echo: ")
    await room.telegram.wait_until(lambda: len(room.telegram.reactions) == 2, "two reactions")
    assert {r["message_id"] for r in room.telegram.reactions} == {asked["message"]["message_id"]}
    seen = [f["reaction"][0]["emoji"] if m == "setMessageReaction" else m for m, f in room.telegram.calls]
    assert [s for s in seen if s in ("👀", "👍", "sendMessage")] == ["👀", "sendMessage", "👍"]


async def test_the_command_menus_are_set_at_start_for_private_chats_groups_and_the_privileged(opened: Opener) -> None:
    room = await opened()
    scopes = ("all_private_chats", "all_group_chats", "all_chat_administrators", f"chat:{OWNER}")
    await room.telegram.wait_until(lambda: set(scopes) <= room.telegram.menus.keys(), "every menu")
    private, groups, administrators, owners = ([c["command"] for c in room.telegram.menus[s]] for s in scopes)
    assert {"model", "new"} <= set(private) and not {"activation", "approve", "pair"} & set(private)
    assert {"model", "new"} <= set(groups) and "activation" not in groups
    assert {"model", "new", "activation", "approve"} <= set(administrators)
    assert {"model", "new", "approve", "deny", "pair"} <= set(owners) and "activation" not in owners
