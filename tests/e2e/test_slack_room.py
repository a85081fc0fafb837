"""Issues 25 and 26 on Slack, end to end: the real slack-bolt and agent against the fake Slack and the fake model."""

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from bot.agent.edits import ANSWERED_NOTE
from bot.cli.main import app
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.slack_server import FakeSlack
from tests.support.gateway import SLACK_OWNER as OWNER
from tests.support.gateway import SlackBot

CHANNEL = "C0GENERAL"
MEMBER = "U0MEMBER"
EXEC_ALWAYS_ASKS = {"exec": {"sandbox": "off", "approval": "always"}}
MODELS = [{"name": "openai/big-model", "alias": "big"}, {"name": "openai/small-model", "alias": "small"}]


def buttons(posted: dict) -> list[str]:
    """The labels of the buttons under a posted message."""
    blocks = posted.get("blocks")
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks or []
    return [e["text"]["text"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def user_text(request: dict) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


async def test_an_exec_approval_is_decided_by_the_owners_press_and_not_by_a_members(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    slack.users[MEMBER] = "Mo Member"
    fake_llm.script(ToolCalls((("exec", {"command": "echo approved-run"}),)), Text("Ran it."))
    async with SlackBot(tmp_path, fake_llm, slack, {"tools": EXEC_ALWAYS_ASKS}, allow_from=[MEMBER]):
        asked = slack.channel_message("run the echo", channel=CHANNEL, user=OWNER, mention=True)
        (prompt,) = await slack.wait_for_posted(1)
        assert buttons(prompt) == ["Allow once", "Allow always", "Deny"]
        assert prompt["thread_ts"] == asked["ts"] and prompt["text"].startswith("Run ")
        slack.press(prompt, "Allow once", user=MEMBER, name="mo")
        await slack.wait_until(lambda: len(slack.ephemeral) == 1, 10, lambda: f"{len(slack.ephemeral)} ephemeral")
        (notice,) = slack.ephemeral
        assert notice["user"] == MEMBER and notice["text"].startswith("Not yours")
        assert (notice["channel"], notice["thread_ts"]) == (CHANNEL, asked["ts"])
        assert slack.updates == [] and len(fake_llm.requests) == 1
        slack.press(prompt, "Allow once", user=OWNER, name="olive")
        posted = await slack.wait_for_posted(2)
        (update,) = slack.updates
    assert (update["channel"], update["ts"]) == (CHANNEL, prompt["ts"])
    assert "Allowed once by Olive" in update["text"] and buttons(update) == []
    assert posted[1]["text"] == "Ran it." and posted[1]["thread_ts"] == asked["ts"]
    assert "approved-run" in tool_results(fake_llm.requests[1])[0]
    assert all(e.acked and e.ack_delay < 3.0 for e in slack.envelopes_of("interactive"))


async def test_an_approval_decided_by_typing_loses_its_buttons_and_a_late_press_hears_it_is_closed(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    fake_llm.script(ToolCalls((("exec", {"command": "true"}),)), Text("Ran it."))
    async with SlackBot(tmp_path, fake_llm, slack, {"tools": EXEC_ALWAYS_ASKS}):
        slack.dm("run true", user=OWNER)
        (prompt,) = await slack.wait_for_posted(1)
        code = prompt["text"].rsplit(" ", 1)[-1]
        slack.dm(f"/approve {code}", user=OWNER)
        await slack.wait_until(lambda: len(slack.updates) == 1, 10, lambda: "the prompt was not updated")
        slack.press(prompt, "Deny", user=OWNER, name="olive", as_posted=True)
        await slack.wait_until(lambda: len(slack.ephemeral) == 1, 10, lambda: f"{len(slack.ephemeral)} ephemeral")
    (update,) = slack.updates
    assert (update["ts"], buttons(update)) == (prompt["ts"], [])
    assert update["text"].startswith("Run `true`?\nAllowed once by ") and update["text"].endswith(" (typed).")
    assert slack.ephemeral[0]["text"] == "This question is closed." and slack.ephemeral[0]["user"] == OWNER


async def a_colour_question(fake_llm: FakeLLM, slack: FakeSlack) -> dict:
    """The owner asks; the model asks back with `ask_user` (red, green or blue): the posted question."""
    ask = ("ask_user", {"question": "Which colour?", "options": ["red", "green", "blue"]})
    fake_llm.script(ToolCalls((ask,)), Text("Green it is."))
    slack.dm("pick a colour", user=OWNER)
    (question,) = await slack.wait_for_posted(1)
    return question


async def test_ask_user_answered_by_typing_loses_its_buttons(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    async with SlackBot(tmp_path, fake_llm, slack):
        question = await a_colour_question(fake_llm, slack)
        slack.dm("2", user=OWNER)
        await slack.wait_until(lambda: len(slack.updates) == 1, 10, lambda: "the question was not updated")
        await slack.wait_for_posted(2)
    (update,) = slack.updates
    assert (update["ts"], buttons(update)) == (question["ts"], [])
    assert update["text"].startswith("Which colour?\n→ green (") and update["text"].endswith(", typed)")


async def test_an_ask_user_press_is_the_answer_the_model_receives(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    async with SlackBot(tmp_path, fake_llm, slack):
        question = await a_colour_question(fake_llm, slack)
        assert question["text"] == "Which colour?" and buttons(question) == ["red", "green", "blue"]
        slack.press(question, "green", user=OWNER, name="olive")
        posted = await slack.wait_for_posted(2)
        await slack.wait_until(lambda: len(slack.updates) == 1, 10, lambda: "no update")
    assert posted[1]["text"] == "Green it is."
    assert tool_results(fake_llm.requests[1]) == ["Olive answered: green"]
    assert slack.updates[0]["ts"] == question["ts"] and "green" in slack.updates[0]["text"]


async def test_the_model_slash_command_offers_buttons_and_a_press_switches_the_chats_model(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    async with SlackBot(tmp_path, fake_llm, slack, {"llm": {"models": MODELS}}):
        slack.slash_command("/model", user=OWNER)
        (menu,) = await slack.wait_for_posted(1)
        (envelope,) = slack.envelopes_of("slash_commands")
        assert envelope.acked and envelope.ack_delay < 3.0
        assert menu["text"].startswith("Model: openai/fake-model (default)")
        assert buttons(menu)[:2] == ["big", "small"]
        slack.press(menu, "big", user=OWNER)
        await slack.wait_until(lambda: len(slack.updates) == 1, 10, lambda: "the menu was not updated")
        fake_llm.script(Text("hi from big"))
        slack.dm("hello", user=OWNER)
        posted = await slack.wait_for_posted(2)
    assert slack.updates[0]["ts"] == menu["ts"] and "big-model" in slack.updates[0]["text"]
    assert buttons(slack.updates[0]) == [] and posted[1]["text"] == "hi from big"
    assert [r["model"] for r in fake_llm.requests] == ["big-model"]


async def test_the_first_mention_in_an_unseen_thread_shows_the_model_its_parent_and_earlier_replies(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    slack.users[MEMBER] = "Mo Member"
    async with SlackBot(tmp_path, fake_llm, slack, allow_from=[MEMBER]):
        parent = slack.channel_message("shall we ship on friday?", channel=CHANNEL, user=MEMBER)
        slack.channel_message("the tests are green", channel=CHANNEL, user=MEMBER, thread_ts=parent["ts"])
        slack.channel_message("what do you think?", channel=CHANNEL, user=OWNER, thread_ts=parent["ts"], mention=True)
        (posted,) = await slack.wait_for_posted(1)
    (request,) = fake_llm.requests
    text = user_text(request)
    assert posted["thread_ts"] == parent["ts"]
    assert "[replying to a message from Mo (U0MEMBER)]" in text and "shall we ship on friday?" in text
    assert "since you last spoke" in text and text.count("the tests are green") == 1
    assert text.endswith("shall we ship on friday?\n<<end of untrusted message>>\nwhat do you think?")
    assert [m for m, _ in slack.calls].count("conversations.replies") == 1


async def test_a_mention_in_a_channel_brings_the_chatter_before_it_in_one_model_call(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    slack.users[MEMBER] = "Mo Member"
    async with SlackBot(tmp_path, fake_llm, slack, allow_from=[MEMBER], group_policy="mention"):
        slack.channel_message("the deploy failed again", channel=CHANNEL, user=MEMBER)
        slack.channel_message("it is the migration", channel=CHANNEL, user=OWNER)
        slack.channel_message("what went wrong?", channel=CHANNEL, user=OWNER, mention=True)
        await slack.wait_for_posted(1)
        await slack.wait_for_acks(4)  # the mention's twin app_mention too
    (request,) = fake_llm.requests
    text = user_text(request)
    assert "since you last spoke" in text
    assert text.index("the deploy failed again") < text.index("it is the migration") < text.index("what went wrong?")
    assert "Mo" in text and text.endswith("what went wrong?")


async def test_an_edit_replaces_a_queued_message_and_is_noted_once_answered(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    def all_acked() -> bool:
        return all(e.acked for e in slack.envelopes_of("events_api"))

    fake_llm.script(ToolCalls((("exec", {"command": "echo busy"}),)), Text("Ran it."))
    async with SlackBot(tmp_path, fake_llm, slack, {"tools": EXEC_ALWAYS_ASKS}):
        slack.dm("run the echo", user=OWNER)
        (prompt,) = await slack.wait_for_posted(1)  # the turn waits for the approval: what follows is queued
        queued = slack.dm("meet at 5", user=OWNER)
        slack.edit(queued, "meet at 6")
        await slack.wait_until(all_acked, 10, lambda: "events not acked")
        slack.press(prompt, "Allow once", user=OWNER)
        posted = await slack.wait_for_posted(3)
        slack.edit(queued, "meet at 7")
        await slack.wait_until(all_acked, 10, lambda: "events not acked")
        slack.dm("when do we meet?", user=OWNER)
        await slack.wait_for_posted(4)
    assert len(fake_llm.requests) == 4 and posted[2]["text"].endswith("meet at 6")
    assert user_text(fake_llm.requests[2]).endswith("meet at 6") and "meet at 5" not in str(fake_llm.requests[2])
    notes = [m["content"] for m in fake_llm.requests[3]["messages"] if ANSWERED_NOTE in str(m.get("content"))]
    assert len(notes) == 1 and str(notes[0]).endswith("meet at 7")


async def test_reactions_and_the_thinking_status_follow_a_turn(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    # Each answer takes longer than the manager's TYPING_DELAY: a quicker one needs no status at all.
    fake_llm.script(Text("Hello.", latency=0.5), Text("Here too.", latency=0.5))
    async with SlackBot(tmp_path, fake_llm, slack, reactions="status", streaming="auto"):
        asked = slack.channel_message("hello", channel=CHANNEL, user=OWNER, mention=True)
        await slack.wait_until(
            lambda: slack.reactions.get((CHANNEL, asked["ts"])) == ["white_check_mark"], 10, lambda: "no ✅"
        )
        in_dm = slack.dm("and here?", user=OWNER)
        await slack.wait_until(lambda: slack.reactions.get(("D0001", in_dm["ts"])) == ["white_check_mark"], 10, str)
        await slack.wait_until(lambda: len(slack.statuses) == 3, 10, lambda: f"{slack.statuses}")
    marks = [(m, f["name"]) for m, f in slack.calls if m.startswith("reactions.") and f["timestamp"] == asked["ts"]]
    assert marks == [("reactions.add", "eyes"), ("reactions.remove", "eyes"), ("reactions.add", "white_check_mark")]
    statuses = [(s["channel_id"], s["thread_ts"], s["status"]) for s in slack.statuses]
    assert statuses == [
        (CHANNEL, asked["ts"], "is thinking…"),  # the reply in this thread clears it
        ("D0001", in_dm["ts"], "is thinking…"),
        ("D0001", in_dm["ts"], ""),  # the reply went to the conversation, not under the question: cleared
    ]
    methods = [m for m, _ in slack.calls]
    first_status, second_status, cleared = (i for i, m in enumerate(methods) if m == "assistant.threads.setStatus")
    first_reply, second_reply = (i for i, m in enumerate(methods) if m == "chat.postMessage")
    assert first_status < first_reply < second_status < second_reply < cleared  # shown while each turn ran


def test_the_slack_manifest_asks_for_what_the_adapter_uses() -> None:
    result = CliRunner().invoke(app, ["manifest", "slack"])
    assert result.exit_code == 0, result.output
    manifest = yaml.safe_load(result.output)
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    called = set(FakeSlack()._methods) - {"auth.test"}  # every Web API method the fake knows the adapter calls
    assert called <= set(SCOPE_OF), called - set(SCOPE_OF)
    assert {SCOPE_OF[method] for method in called} | {"commands", "files:read", "app_mentions:read"} <= scopes
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] and settings["interactivity"]["is_enabled"]
    assert {"app_mention", "message.channels", "message.groups", "message.im"} <= set(
        settings["event_subscriptions"]["bot_events"]
    )
    commands = [c["command"] for c in manifest["features"]["slash_commands"]]
    assert {"/new", "/stop", "/model", "/approve", "/deny", "/activation", "/relaybot-status"} <= set(commands)


SCOPE_OF = {  # api.slack.com/methods: the bot scope each method needs
    "chat.postMessage": "chat:write",
    "chat.update": "chat:write",
    "chat.delete": "chat:write",
    "chat.postEphemeral": "chat:write",
    "chat.startStream": "chat:write",
    "chat.appendStream": "chat:write",
    "chat.stopStream": "chat:write",
    "assistant.threads.setStatus": "chat:write",
    "users.info": "users:read",
    "files.getUploadURLExternal": "files:write",
    "files.completeUploadExternal": "files:write",
    "conversations.history": "channels:history",
    "conversations.replies": "channels:history",
    "reactions.add": "reactions:write",
    "reactions.remove": "reactions:write",
}


async def test_a_model_chosen_in_a_channel_is_used_in_its_threads(
    tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack
) -> None:
    async with SlackBot(tmp_path, fake_llm, slack, {"llm": {"models": MODELS}}):
        slack.slash_command("/model", "small", user=OWNER, channel=CHANNEL)
        (switched,) = await slack.wait_for_posted(1)
        slack.channel_message("hello", channel=CHANNEL, user=OWNER, mention=True)
        await slack.wait_for_posted(2)
    assert switched["text"] == "This chat now uses openai/small-model (small)."
    assert [r["model"] for r in fake_llm.requests] == ["small-model"]
