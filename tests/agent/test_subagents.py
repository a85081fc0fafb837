import asyncio
from pathlib import Path

from bot.agent.subagents import SUBAGENT_ITERATIONS
from bot.events import SubagentCompleted, SubagentSpawned
from tests.fakes.openai_server import FakeLLM, Hang, Reply, Text, ToolCalls
from tests.support.harness import Harness
from tests.support.model_requests import tool_names


def is_subagent(body: dict) -> bool:
    return "background sub-agent" in body["messages"][0]["content"]


def script(body: dict) -> Reply:
    """Main agent spawns once, sub-agent answers, main agent relays the result."""
    last = body["messages"][-1]
    if is_subagent(body):
        return Text("The capital of Australia is Canberra.")
    if last["role"] == "tool":
        return Text("I've started on that in the background.")
    if "[background task" in str(last["content"]):
        return Text("Done: " + str(last["content"]).split("finished]\n", 1)[1].splitlines()[0])
    return ToolCalls((("spawn", {"task": "Find the capital of Australia", "label": "capital"}),))


async def test_spawned_result_is_announced_in_the_origin_chat(tmp_path: Path) -> None:
    async with FakeLLM(default=script) as fake, Harness(tmp_path, fake) as bot:
        first = await bot.send("what's the capital of Australia? research it", chat="telegram:42")
        assert (await bot.reply_to(first)).text == "I've started on that in the background."
        announced = await bot.wait_for(lambda out: out.text.startswith("Done:"))
        charged = {(call.purpose, call.sender) for call in bot.app.ledger.calls()}
    assert charged == {("chat", "telegram:u1"), ("subagent", "telegram:u1")}
    assert announced.chat.session_key == "telegram:42"
    assert announced.text == "Done: The capital of Australia is Canberra."
    sub_request = next(body for body in fake.requests if is_subagent(body))
    assert sub_request["messages"][1]["content"] == "Find the capital of Australia"
    chat_reaching = {"message", "spawn", "cron", "ask_user", "send_file", "generate_image"}
    main_request = next(body for body in fake.requests if not is_subagent(body))
    assert {"message", "spawn", "ask_user", "send_file"} <= set(tool_names(main_request))
    assert not chat_reaching & set(tool_names(sub_request))


async def test_stop_cancels_running_subagents(tmp_path: Path) -> None:
    def hang_subagent(body: dict) -> Reply:
        return Hang() if is_subagent(body) else script(body)

    async with FakeLLM(default=hang_subagent) as fake, Harness(tmp_path, fake) as bot:
        first = await bot.send("research something slow")
        await bot.reply_to(first)
        await fake.wait_for_requests(3)
        assert bot.app.subagents.running("test:1") == 1
        [helper] = [task for task in asyncio.all_tasks() if task.get_name().startswith("subagent:")]
        assert await bot.ask("/stop") == "Stopped and cancelled 1 background task."
        # The cancelled call closes its connection first, which may take the task a loop turn or two to end.
        await asyncio.wait([helper], timeout=5)
        assert helper.cancelled() and bot.app.subagents.running("test:1") == 0
    assert not [out for out in bot.outbox if out.text.startswith("Done:")]


async def test_a_personas_subagent_keeps_its_model_and_tool_subset(tmp_path: Path) -> None:
    persona = {"model": "openai/narrow-model", "tools": ["spawn", "web_fetch"]}
    routes = [{"match": "telegram", "persona": "narrow"}]
    async with (
        FakeLLM(default=script) as fake,
        Harness(tmp_path, fake, personas={"narrow": persona}, routes=routes) as bot,
    ):
        await bot.send("what's the capital of Australia? research it", chat="telegram:42")
        await bot.wait_for(lambda out: out.text.startswith("Done:"))
    sub_request = next(body for body in fake.requests if is_subagent(body))
    assert sub_request["model"] == "narrow-model"
    assert tool_names(sub_request) == ["web_fetch"]
    main_request = next(body for body in fake.requests if not is_subagent(body))
    assert sorted(tool_names(main_request)) == ["spawn", "web_fetch"]


async def test_a_subagent_stops_at_15_model_calls_and_reports_back(tmp_path: Path) -> None:
    def busy_subagent(body: dict) -> Reply:
        if is_subagent(body):  # a new folder each time, so no call repeats
            return ToolCalls((("list_dir", {"path": f"folder-{len(body['messages'])}"}),))
        last = body["messages"][-1]
        if "[background task" in str(last["content"]):
            lines = str(last["content"]).splitlines()
            return Text("Relayed: " + next(line for line in lines if line.startswith("[background task")))
        return script(body)

    async with FakeLLM(default=busy_subagent) as fake, Harness(tmp_path, fake) as bot:
        seen: list[object] = []
        bot.app.events.subscribe(seen.append, SubagentSpawned, SubagentCompleted)
        await bot.send("dig into everything", chat="telegram:42")
        relayed = await bot.wait_for(lambda out: out.text.startswith("Relayed:"))
    assert SUBAGENT_ITERATIONS == 15
    assert sum(is_subagent(body) for body in fake.requests) == 15
    assert relayed.chat.session_key == "telegram:42" and relayed.text.endswith("'capital' finished]")
    report = next(b for b in fake.requests if "[background task" in str(b["messages"][-1]["content"]))
    assert report["messages"][-1]["role"] == "user" and "15" in report["messages"][-1]["content"]
    (spawned,), (completed,) = (
        [e for e in seen if isinstance(e, kind)] for kind in (SubagentSpawned, SubagentCompleted)
    )
    assert (spawned.session_key, spawned.label) == ("telegram:42", "capital")
    assert (completed.subagent_id, completed.status) == (spawned.subagent_id, "finished")
