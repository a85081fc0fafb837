"""A group Telegram upgraded to a supergroup: the chat moves to its new id and what is sent to it goes there."""

from bot.bus import ChatRef, OutboundMessage
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import TelegramBot

GROUP, SUPERGROUP = -4001, -1004001


def sends_to(telegram: FakeTelegram, chat_id: int) -> int:
    return sum(1 for method, fields in telegram.calls if method == "sendMessage" and fields["chat_id"] == chat_id)


def polled_past(telegram: FakeTelegram, update_id: int) -> bool:
    """Whether the bot asked for updates after `update_id`: it handles an update before it polls past it."""
    return any(method == "getUpdates" and (f.get("offset") or 0) > update_id for method, f in telegram.calls)


async def post(bot: TelegramBot, text: str) -> None:
    await bot.gateway.agent.bus.publish_outbound(OutboundMessage(ChatRef("telegram", str(GROUP)), text))


async def test_a_send_refused_because_the_group_moved_goes_to_the_new_id_and_so_do_later_ones(
    bot: TelegramBot, telegram: FakeTelegram
) -> None:
    telegram.migrate(GROUP, SUPERGROUP, notice=False)
    await post(bot, "the daily digest")
    (sent,) = await telegram.wait_for_sent(1)
    assert sent["chat_id"] == SUPERGROUP and sent["text"] == "the daily digest"
    await post(bot, "and one more thing")
    assert [s["chat_id"] for s in await telegram.wait_for_sent(2)] == [SUPERGROUP, SUPERGROUP]
    assert sends_to(telegram, GROUP) == 1  # refused once; the channel remembers the move after that


async def test_the_groups_migration_notice_moves_the_chat_before_anything_is_refused(
    bot: TelegramBot, telegram: FakeTelegram
) -> None:
    notice = telegram.migrate(GROUP, SUPERGROUP)
    await telegram.wait_until(lambda: polled_past(telegram, notice["update_id"]), "the notice handled")
    await post(bot, "hello, new home")
    (sent,) = await telegram.wait_for_sent(1)
    assert sent["chat_id"] == SUPERGROUP
    assert sends_to(telegram, GROUP) == 0
