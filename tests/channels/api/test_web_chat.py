"""The web chat in a real headless Chromium: the login form, a streamed reply shown once, safe Markdown."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.async_api import Page

from tests.channels.api.browser import needs_chromium, phone_page
from tests.channels.api.conftest import OWNER_TOKEN, ApiBot
from tests.fakes.openai_server import Hang, Text, ToolCalls
from tests.files.samples import docx_file
from tests.support.document_reader import read_the_attached_document

README_SCREENSHOT = Path(__file__).resolve().parents[3] / "channels" / "api" / "static" / "web-chat.png"


def screenshot_path(tmp_path: Path) -> Path:
    """Where the chat's screenshot goes: the README's image with RELAYBOT_UPDATE_SCREENSHOT=1, else a temp file."""
    return README_SCREENSHOT if os.environ.get("RELAYBOT_UPDATE_SCREENSHOT") == "1" else tmp_path / "web-chat.png"


pytestmark = needs_chromium


async def log_in(page: Page, bot: ApiBot) -> None:
    """Open the chat and log in through its form, as a person would."""
    await page.goto(bot.url + "/")
    await page.fill("#token", OWNER_TOKEN)
    await page.click("#login button")
    await page.wait_for_selector("#chat", state="visible")


async def test_page_without_a_session_shows_only_the_login_form(api_bot: ApiBot) -> None:
    async with phone_page() as page:
        await page.goto(api_bot.url + "/")
        await page.wait_for_selector("#login", state="visible")
        assert await page.is_hidden("#chat")
        await page.fill("#token", "wrong")
        await page.click("#login button")
        await page.wait_for_selector("text=That token was refused.")
        assert await page.context.cookies() == []


async def test_the_login_form_sets_an_httponly_strict_cookie_and_the_chat_works(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(Text("logged in and answering"))
    async with phone_page() as page:
        await log_in(page, api_bot)
        [cookie] = await page.context.cookies()
        assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"]) == ("relaybot_session", True, "Strict")
        assert cookie["value"] != OWNER_TOKEN and await page.evaluate("document.cookie") == ""
        assert "token" not in page.url
        await page.fill("#text", "are you there?")
        await page.press("#text", "Enter")
        await page.wait_for_selector(".msg.bot.final:has-text('logged in and answering')")
        await page.reload()  # the cookie, not the page, remembers the login
        await page.wait_for_selector(".msg.bot:has-text('logged in and answering')")
        assert await page.is_hidden("#login")
        await page.click("#logout")
        await page.wait_for_selector("#login", state="visible")
        assert await page.context.cookies() == []
        await page.reload()
        await page.wait_for_selector("#login", state="visible")


async def test_typed_message_streams_in_and_the_final_text_shows_once(
    api_bot: ApiBot, fake_llm, tmp_path: Path
) -> None:
    reply = "Here is **bold** advice, a [link](https://example.org), <b>raw html</b> and [bad](javascript:alert(1))."
    fake_llm.script(Text(reply, chunk_delay=0.02))
    async with phone_page() as page:
        await log_in(page, api_bot)
        await page.fill("#text", "give me advice")
        await page.press("#text", "Enter")
        await page.wait_for_selector(".msg.bot.live")
        final = await page.wait_for_selector(".msg.bot.final")
        assert await page.locator(".msg.bot").count() == 1
        assert await page.locator(".msg.user").inner_text() == "give me advice"
        assert (await final.inner_text()).count("Here is bold advice") == 1
        body = await final.eval_on_selector("div:last-child", "e => e.innerHTML")
        assert body == await page.evaluate("renderMarkdown", reply)
        assert await final.eval_on_selector("strong", "e => e.textContent") == "bold"
        assert await final.eval_on_selector_all("a", "links => links.map(a => a.href)") == ["https://example.org/"]
        assert "<b>raw html</b>" in await final.inner_text()
        screenshot = screenshot_path(tmp_path)
        await page.screenshot(path=str(screenshot))
        assert screenshot.stat().st_size > 0
        await page.reload()
        await page.wait_for_selector(".msg.bot")
        assert await page.locator(".msg").count() == 2


async def test_tool_progress_stop_and_new(api_bot: ApiBot, fake_llm) -> None:
    fake_llm.script(ToolCalls((("list_dir", {"path": "."}),)), Hang())
    async with phone_page() as page:
        await log_in(page, api_bot)
        await page.fill("#text", "look around")
        await page.click("#send")
        await page.wait_for_selector(".tool.ok[data-name='list_dir']")
        await page.wait_for_selector("#stop:not([disabled])")
        await page.click("#stop")
        await page.wait_for_selector("#stop[disabled]")
        await page.click("#new")
        await page.wait_for_selector(".msg.bot.final:has-text('Started a new conversation.')")
        assert await page.locator(".msg.user").count() == 0


async def test_a_file_attached_in_the_web_chat_is_read_by_read_document(
    api_bot: ApiBot, fake_llm, tmp_path: Path
) -> None:
    fake_llm.default = read_the_attached_document
    plan = docx_file(tmp_path / "plan.docx", "Garden plan", ["Plant tomatoes in May."])
    async with phone_page() as page:
        await log_in(page, api_bot)
        await page.set_input_files("#file", str(plan))
        await page.wait_for_selector("#attached:has-text('plan.docx')")
        await page.fill("#text", "what does it say?")
        await page.press("#text", "Enter")
        await page.wait_for_selector(".tool.ok[data-name='read_document']")
        final = await page.wait_for_selector(".msg.bot.final:has-text('Plant tomatoes in May.')")
        assert (await final.inner_text()).count("Read: ") == 1
        assert await page.locator(".msg.user").inner_text() == "[plan.docx]\nwhat does it say?"
        assert await page.is_hidden("#attached")
    asked = fake_llm.requests[0]["messages"][-1]["content"]
    assert "\nwhat does it say?\n[attached file: f_" in asked and " plan.docx (" in asked
    inbox = api_bot.config.workspace / "inbox" / "api" / "me"
    [kept] = list(inbox.iterdir())
    assert kept.name.endswith("-plan.docx") and kept.read_bytes() == plan.read_bytes()
