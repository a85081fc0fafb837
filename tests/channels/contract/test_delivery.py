"""How replies go out, on every platform: split within the limit, rate limits waited out, errors translated."""

import asyncio

from bot.events import DeliveryFailed
from tests.channels.contract.gateways import user_texts
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.harness import GatewayUnderTest, next_event
from tests.support.platform import Platform

RETRY_AFTER = 3.0


async def test_long_reply_is_split_within_the_limit_with_code_intact(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(150)) + "\n```"
    prose = "\n\n".join(("A sentence about the code. " * 10).strip() for _ in range(8))
    fake_llm.script(Text(prose + "\n\n" + code + "\n\n" + prose))
    platform.dm("explain", platform.owner)
    await platform.wait_sent(1)
    platform.dm("barrier", platform.owner)
    count = 1
    while not platform.sent()[-1].endswith("barrier"):
        count += 1
        await platform.wait_sent(count)
    texts = platform.sent()[:-1]
    if platform.limit is None:  # declared: one message holds any reply
        (whole,) = texts
        assert "value_149 = 149" in whole and whole.endswith("A sentence about the code.")
    else:
        assert len(texts) >= 2
        assert all(len(platform.visible(text)) <= platform.limit for text in texts)
    fences = ("<pre>", "</pre>") if platform.name == "telegram" else ("```", "```")
    for text in texts:
        if fences[0] == fences[1]:
            assert text.count(fences[0]) % 2 == 0
        else:
            assert text.count(fences[0]) == text.count(fences[1])


async def test_a_rate_limit_is_waited_out_and_the_reply_sent_once(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    platform.limit_send(RETRY_AFTER if not platform.sdk_waits_out_rate_limits else 0.05)
    platform.dm("hello", platform.owner)
    await platform.wait_sent(1)
    assert platform.sent()[0].endswith("hello") and platform.send_attempts() == 2
    if platform.sdk_waits_out_rate_limits:
        return
    if platform.names_its_wait:
        assert bot.sleep.waits == [RETRY_AFTER]
    else:  # declared: the platform names no wait, so the bot waits by its own policy, once
        assert len(bot.sleep.waits) == 1 and bot.sleep.waits[0] > 0


async def test_a_server_error_is_retried_and_the_reply_sent_once(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    platform.break_send()
    platform.dm("hello", platform.owner)
    await platform.wait_sent(1)
    assert len(platform.sent()) == 1 and platform.send_attempts() == 2
    # The outbox retries a 5xx at once; a channel that retries its own calls (email, Teams, WhatsApp, XMPP)
    # waits one backoff first.
    assert len(bot.sleep.waits) <= 1


async def test_a_refusal_fails_that_reply_alone_with_the_platforms_reason(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    platform.refuse_send()
    failed = asyncio.create_task(next_event(bot.gateway.agent.events, DeliveryFailed))
    platform.dm("first", platform.owner)
    event = await failed
    assert platform.forbidden in event.error and "Traceback" not in event.error
    assert platform.send_attempts() == 1  # a refusal is final: never retried
    await platform.wait_sent(1)  # the owner hears of the dead letter (here, in the very chat: one refusal only)
    platform.dm("second", platform.owner)
    await platform.wait_sent(2)
    notice, answer = platform.sent()
    assert "relaybot queue list" in notice
    assert answer.endswith("second") and user_texts(fake_llm)[1].endswith("second")
