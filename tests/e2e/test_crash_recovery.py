"""SIGKILL the gateway at the worst moments, restart it, and count the answers: each message exactly once.

Every launch of `relaybot run` pays for importing litellm, so one test walks one home through every
kill instead of starting a fresh gateway per moment.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path

from tests.fakes.openai_server import FakeLLM, Hang, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.cli_process import env_for
from tests.support.gateway_process import GatewayProcess
from tests.support.polling import until

OWNER = 42


def answers(telegram: FakeTelegram) -> Counter[str]:
    """How often each message token (`k<chat>x<n>`, chat in three digits) was echoed back."""
    counts: Counter[str] = Counter()
    for sent in telegram.sent:
        counts.update(word for word in sent["text"].split() if word.startswith("k") and "x" in word)
    return counts


def user_turns(bot: GatewayProcess, token: str) -> int:
    """How many user messages in all sessions carry `token`."""
    return sum(
        1
        for lines in bot.session_lines().values()
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "user" and token in line["message"]["content"]
    )


async def test_messages_survive_a_kill_at_each_moment_and_are_answered_once(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    chats = list(range(101, 111))
    bot = GatewayProcess(tmp_path, fake_llm, telegram, [OWNER, *chats], agent={"queue_mode": "followup"})
    await bot.start()

    # 1. killed right after getUpdates handed the update out
    update = telegram.text("k042x1", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_delivered(update["update_id"])
    await bot.kill()
    await bot.start()
    await telegram.wait_for_sent(1, timeout=60)

    # 2. killed while the model is thinking: run again, the session holds the message once
    fake_llm.script(Hang())
    telegram.text("k042x2", chat_id=OWNER, user_id=OWNER)
    await fake_llm.wait_for_requests(2)
    await bot.kill()

    # 3. killed after the reply was journaled, while it was on its way to Telegram
    telegram.hold("sendMessage")
    await bot.start()
    await telegram.wait_for_call("sendMessage", 2, timeout=60)
    await bot.kill()
    telegram.release("sendMessage")
    requests = len(fake_llm.requests)
    await bot.start()
    await telegram.wait_for_sent(2, timeout=60)
    assert len(fake_llm.requests) == requests  # the turn did not run again: its reply was in the outbox

    # a second gateway on the same home exits at once, naming the first, and leaves its socket alone
    # (the first opens its control socket once the model is warm, after the channels connected)
    await until((bot.state / "control.sock").exists, 60, interval=0.05)
    second = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "run", env=env_for(tmp_path), stderr=asyncio.subprocess.PIPE
    )
    _, err = await asyncio.wait_for(second.communicate(), 60)
    assert second.returncode == 1 and len(err.decode().strip().splitlines()) == 1
    assert f"pid {bot.process.pid}" in err.decode()
    assert (bot.state / "control.sock").exists()

    # 4. killed during a burst of 30 messages in 10 chats. A kill while sends are in flight may double
    # only those sends: Telegram had them, the bot never heard back.
    fake_llm.latency = 0.05
    tokens = [f"k{chat}x{n}" for n in range(3) for chat in chats]
    for token in tokens:
        telegram.text(token, chat_id=int(token[1:4]), user_id=int(token[1:4]))
    await telegram.wait_for_sent(2 + 5, timeout=60)
    await bot.kill()
    await telegram.wait_for_disconnects()
    # What Telegram had from the dead process is read once the new one polls, its sends held till then: a request
    # the dead one had written in full may still be answered after its connections are gone (one still in the
    # listening socket's queue, on a loaded machine). Those in flight had reached Telegram; send_concurrency (8) at
    # most. Not the last 8 Telegram saw: the bot may take the answer to an earlier send after those to later ones.
    telegram.hold("sendMessage")
    await bot.start()
    reached = set(answers(telegram))
    telegram.release("sendMessage")
    await until(lambda: set(tokens) <= set(answers(telegram)), 90)  # a count would take a doubled send for one

    # SIGTERM lets a running turn finish and its reply go out
    fake_llm.latency = 0.0
    fake_llm.script(Text("echo: k042x3", latency=0.5))
    telegram.text("k042x3", chat_id=OWNER, user_id=OWNER)
    while not any("k042x3" in str(r["messages"][-1]["content"]) for r in fake_llm.requests):
        await fake_llm.wait_for_requests(len(fake_llm.requests) + 1)
    err = await bot.stop()
    assert "Traceback" not in err

    counts = answers(telegram)
    assert set(counts) == {"k042x1", "k042x2", "k042x3", *tokens}, err
    assert [counts[f"k042x{n}"] for n in (1, 2, 3)] == [1, 1, 1]
    doubled = {token for token, n in counts.items() if n > 1}
    assert doubled <= reached and len(doubled) <= 8 and max(counts.values()) <= 2
    for chat in chats:
        said = list(dict.fromkeys(s["text"].split()[-1] for s in telegram.sent if s["chat_id"] == chat))
        assert said == [f"k{chat}x{n}" for n in range(3)]
    assert all(user_turns(bot, token) == 1 for token in ["k042x1", "k042x2", "k042x3", *tokens])
    rerun = next(r["messages"] for r in fake_llm.requests[2:] if "k042x2" in r["messages"][-1]["content"])
    assert sum(m["content"].count("k042x2") for m in rerun if m["role"] == "user") == 1
