"""The web chat in headless Chromium shows the model's reasoning folded above the reply, live and after a reload."""

from __future__ import annotations

from tests.channels.api.browser import needs_chromium, phone_page
from tests.channels.api.conftest import ApiBot
from tests.channels.api.test_web_chat import log_in
from tests.fakes.openai_server import Text

pytestmark = needs_chromium


async def test_reasoning_is_shown_folded_live_and_after_a_reload(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("The folded answer.", reasoning="Weighing it up."))
    async with phone_page() as page:
        await log_in(page, api_bot)
        await page.fill("#text", "think first")
        await page.press("#text", "Enter")
        await page.wait_for_selector(".msg.bot.final:has-text('The folded answer.')")
        for _ in range(2):
            details = page.locator(".msg.bot details.reasoning")
            assert await details.count() == 1 and await details.get_attribute("open") is None
            assert await details.locator("div").text_content() == "Weighing it up."
            assert not await details.locator("div").is_visible()  # folded until clicked
            await page.reload()
            await page.wait_for_selector(".msg.bot:has-text('The folded answer.')")
        await page.click(".msg.bot details.reasoning summary")
        assert await page.locator(".msg.bot details.reasoning div").is_visible()
