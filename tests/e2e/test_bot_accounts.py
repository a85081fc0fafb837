"""Several bots per platform in one gateway, end to end: python-telegram-bot against two fake Bot APIs (two
tokens), discord.py against two fake Discords behind one address, the agent and the fake LLM; each bot hears
its own chats and answers only through itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.bus import ChatRef
from tests.fakes.discord_accounts import DiscordFront
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, SLACK_OWNER, slack_section
from tests.support.harness import GatewayUnderTest

WORK_TOKEN = "777:WORK-TOKEN"


def two_telegram_bots(telegram: FakeTelegram, work: FakeTelegram, **overrides: Any) -> dict[str, Any]:
    """The default bot on `telegram`, account `work` on the second fake, with its own token and server."""
    return {
        "enabled": True,
        "token": telegram.token,
        "api_base": telegram.base_url,
        "streaming": "off",
        "accounts": [{"name": "work", "token": work.token, "api_base": work.base_url}],
        **overrides,
    }


def two_discord_bots(main: FakeDiscord, support: FakeDiscord, front: DiscordFront) -> dict[str, Any]:
    """The default bot on `main`, account `support` on the second fake, both reached through `front`."""
    return {
        "enabled": True,
        "token": main.token,
        "api_base": front.api_base,
        "gateway_url": front.gateway_url,
        "streaming": "off",
        "accounts": [{"name": "support", "token": support.token}],
    }


def said(sent: dict) -> str:
    """The user's words a reply echoes (the fake model echoes the message, after its one-line header)."""
    return str(sent["text"]).rpartition("\n")[2]


def user_texts(bot: GatewayUnderTest, chat: ChatRef) -> list[str]:
    """What the user said in the session of `chat`, as the agent stored it."""
    messages = bot.gateway.agent.sessions.recent(chat.session_key, 50)
    return [str(m["content"]).rpartition("\n")[2] for m in messages if m.get("role") == "user"]


async def test_two_telegram_bots_each_answer_their_own_dms_with_sessions_apart(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with FakeTelegram(WORK_TOKEN, bot_id=998, bot_username="work_bot") as work:
        section = two_telegram_bots(telegram, work)
        async with GatewayUnderTest(tmp_path, fake_llm, [f"telegram:{OWNER}"], {"telegram": section}) as bot:
            telegram.text("apples for the family", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_for_sent(1)
            work.text("invoices for the office", chat_id=OWNER, user_id=OWNER)
            await work.wait_for_sent(1)
            telegram.text("and pears", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_for_sent(2)
            health = bot.gateway.manager.health()
    assert [said(s) for s in telegram.sent] == ["apples for the family", "and pears"]
    assert [said(s) for s in work.sent] == ["invoices for the office"]
    assert {s["chat_id"] for s in telegram.sent + work.sent} == {OWNER}
    # the same user id on two bots is two sessions: the work bot's model call never saw the family chat
    work_call = next(r for r in fake_llm.requests if "invoices" in str(r["messages"][-1]["content"]))
    assert "apples" not in str(work_call["messages"])
    assert user_texts(bot, ChatRef("telegram", str(OWNER))) == ["apples for the family", "and pears"]
    assert user_texts(bot, ChatRef("telegram", str(OWNER), account="work")) == ["invoices for the office"]
    assert {name: h.state for name, h in health.items()} == {"telegram": "connected", "telegram@work": "connected"}


async def test_an_unsent_reply_of_the_second_bot_goes_out_through_it_after_a_restart(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with FakeTelegram(WORK_TOKEN, bot_id=998, bot_username="work_bot") as work:
        section = two_telegram_bots(telegram, work)
        work.hold("sendMessage")
        async with GatewayUnderTest(tmp_path, fake_llm, [f"telegram:{OWNER}"], {"telegram": section}):
            work.text("remember the invoice", chat_id=OWNER, user_id=OWNER)
            await work.wait_for_call("sendMessage")  # journaled in the outbox, on its way out, held
        assert work.sent == []
        work.release("sendMessage")
        requests = len(fake_llm.requests)
        async with GatewayUnderTest(tmp_path, fake_llm, [f"telegram:{OWNER}"], {"telegram": section}):
            await work.wait_for_sent(1)
    assert [said(s) for s in work.sent] == ["remember the invoice"]
    assert telegram.sent == [] and len(fake_llm.requests) == requests  # no second turn: it came from the outbox


async def test_two_discord_bots_each_answer_their_own_dms_with_sessions_apart(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    main, support = FakeDiscord("main-token", bot_id=900), FakeDiscord("support-token", bot_id=901)
    async with main, support, DiscordFront(main, support) as front:
        section = two_discord_bots(main, support, front)
        async with GatewayUnderTest(tmp_path, fake_llm, [f"discord:{OWNER}"], {"discord": section}) as bot:
            await bot.gateway.manager.ready("discord")
            await bot.gateway.manager.ready("discord@support")
            dm = main.dm("lunch plans", user_id=OWNER)
            await main.wait_for_sent(1)
            ticket = support.dm("my printer is broken", user_id=OWNER)
            await support.wait_for_sent(1)
    assert [said_on_discord(s) for s in main.sent] == ["lunch plans"]
    assert [said_on_discord(s) for s in support.sent] == ["my printer is broken"]
    assert user_texts(bot, ChatRef("discord", dm["channel_id"])) == ["lunch plans"]
    on_support = ChatRef("discord", ticket["channel_id"], account="support")
    assert user_texts(bot, on_support) == ["my printer is broken"]
    assert "my printer is broken" not in user_texts(bot, ChatRef("discord", ticket["channel_id"]))


async def test_a_dm_sent_to_the_second_discord_bot_while_the_gateway_was_down_is_read_and_answered_by_it(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    main, support = FakeDiscord("main-token", bot_id=900), FakeDiscord("support-token", bot_id=901)
    async with main, support, DiscordFront(main, support) as front:
        section = two_discord_bots(main, support, front)
        async with GatewayUnderTest(tmp_path, fake_llm, [f"discord:{OWNER}"], {"discord": section}) as bot:
            await bot.gateway.manager.ready("discord@support")
            support.dm("first ticket", user_id=OWNER)
            await support.wait_for_sent(1)
        support.dm_while_offline("sent while you were away", user_id=OWNER)
        async with GatewayUnderTest(tmp_path, fake_llm, [f"discord:{OWNER}"], {"discord": section}):
            await support.wait_for_sent(2)
    assert [said_on_discord(s) for s in support.sent] == ["first ticket", "sent while you were away"]
    assert main.sent == []
    assert (tmp_path / "state" / "catchup" / "discord@support.json").exists()


def said_on_discord(sent: dict) -> str:
    """The user's words a Discord reply echoes."""
    return str(sent["content"]).rpartition("\n")[2]


async def test_two_slack_apps_each_answer_their_own_dms(tmp_path: Path, fake_llm: FakeLLM) -> None:
    first = FakeSlack()
    second = FakeSlack("xoxb-team2", "xapp-team2", bot_user_id="UBOT2", team_id="T0002")
    async with first, second:
        team2 = {"name": "team2", "bot_token": second.bot_token, "app_token": second.app_token}
        section = slack_section(first, accounts=[{**team2, "api_base": second.base_url}])
        async with GatewayUnderTest(tmp_path, fake_llm, [f"slack:{SLACK_OWNER}"], {"slack": section}) as bot:
            await bot.gateway.manager.ready("slack")
            await bot.gateway.manager.ready("slack@team2")
            first.dm("first team question", user=SLACK_OWNER)
            await first.wait_for_posted(1)
            second.dm("second team question", user=SLACK_OWNER)
            await second.wait_for_posted(1)
    assert [p["text"].rpartition("\n")[2] for p in first.posted] == ["first team question"]
    assert [p["text"].rpartition("\n")[2] for p in second.posted] == ["second team question"]
    assert user_texts(bot, ChatRef("slack", "D0001", account="team2")) == ["second team question"]
