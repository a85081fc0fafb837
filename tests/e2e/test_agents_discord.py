"""Several agents in one gateway, end to end on Discord: a guild bound to one agent, DMs to the default one."""

from pathlib import Path

from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM
from tests.support.gateway import OWNER, DiscordBot

WORK = {"agents": [{"name": "work", "llm": {"model": "openai/work-model"}}]}


def system_prompt(request: dict) -> str:
    return request["messages"][0]["content"] if isinstance(request["messages"][0]["content"], str) else ""


def said(discord: FakeDiscord, text: str) -> bool:
    return any(text in sent["content"] for sent in discord.sent)


async def test_a_guild_bound_to_one_agent_and_a_dm_to_another_keep_apart(
    tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord
) -> None:
    bindings = [{"agent": "work", "channel": "discord", "server": str(discord.guild_id)}]
    bot = DiscordBot(tmp_path, fake_llm, discord, bindings=bindings, **WORK)
    work_workspace = tmp_path / "agents" / "work"
    work_workspace.mkdir(parents=True)
    (work_workspace / "SOUL.md").write_text("You are Worky, the work assistant.")
    (bot.config.workspace / "SOUL.md").parent.mkdir(parents=True, exist_ok=True)
    (bot.config.workspace / "SOUL.md").write_text("You are Homey, the family assistant.")
    async with bot:
        await bot.gateway.manager.ready("discord")
        discord.guild_message("the quarterly numbers", user_id=OWNER, mention_bot=True)
        await discord.wait_until(lambda: said(discord, "echo: ") and len(fake_llm.requests) >= 1, "the guild answer")
        discord.dm("my sister's birthday", user_id=OWNER)
        await discord.wait_until(lambda: said(discord, "sister's birthday"), "the DM answer")

        guild_call, dm_call = fake_llm.requests[0], fake_llm.requests[-1]
        assert guild_call["model"] == "work-model" and "Worky" in system_prompt(guild_call)
        assert dm_call["model"] == "fake-model" and "Homey" in system_prompt(dm_call)
        assert "quarterly" not in str(dm_call["messages"]) and "sister" not in str(guild_call["messages"])

        discord.guild_message("/agent", user_id=OWNER, mention_bot=True)
        await discord.wait_until(lambda: said(discord, "Agent work answers here"), "/agent in the guild")
        discord.dm("/agent", user_id=OWNER)
        await discord.wait_until(lambda: said(discord, "Agent main answers here"), "/agent in the DM")
        assert "bindings[0] (discord server" in next(s["content"] for s in discord.sent if "Agent work" in s["content"])

    work_sessions = list((tmp_path / "state" / "agents" / "work" / "sessions").glob("*.jsonl"))
    main_sessions = list((tmp_path / "state" / "sessions").glob("*.jsonl"))
    assert [path.read_text().count("quarterly") > 0 for path in work_sessions] == [True]
    assert all("quarterly" not in path.read_text() for path in main_sessions)
    assert any("sister" in path.read_text() for path in main_sessions)
