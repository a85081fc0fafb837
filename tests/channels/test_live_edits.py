"""EditedMessages never sends an edit that would change nothing the user sees."""

import html

from channels.formatting import markdown_to_telegram_html
from channels.live_edits import EditedMessages


class Recorded:
    """EditsMessages that records each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, bool]] = []

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        self.calls.append(("post", text, markup))
        return str(len(self.calls))

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        self.calls.append(("edit", text, markup))

    async def delete(self, message_id: str) -> None:
        self.calls.append(("delete", message_id, False))


def plain_as_html(text: str) -> str:
    return html.escape(text, quote=False)


async def test_a_final_text_equal_to_the_last_update_is_not_sent_again() -> None:
    target = Recorded()
    writer = EditedMessages(target, 4096, markdown_to_telegram_html, plain=plain_as_html)
    await writer.show("Fish & chips, 3 < 4")
    assert await writer.finish("Fish & chips, 3 < 4")
    assert target.calls == [("post", "Fish & chips, 3 < 4", False)]


async def test_a_final_text_with_formatting_is_still_edited_in() -> None:
    target = Recorded()
    writer = EditedMessages(target, 4096, markdown_to_telegram_html, plain=plain_as_html)
    await writer.show("It is **5**")
    await writer.finish("It is **5**")
    assert target.calls[-1] == ("edit", "It is <b>5</b>", True)


async def test_without_an_equivalence_markup_and_plain_pages_differ() -> None:
    target = Recorded()
    writer = EditedMessages(target, 4096, lambda text: text)
    await writer.show("same")
    await writer.finish("same")
    assert target.calls[-1] == ("edit", "same", True)
