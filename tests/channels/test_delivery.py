from bot.bus import ChatRef, OutboundMessage
from bot.retry import RetryPolicy
from channels.delivery import ChunkProgress, chunk_progress, send_in_chunks

TEXT = "first part\n\nsecond part\n\nthird part"
LIMIT = 12


async def send(confirmed: int, ends_send: bool) -> tuple[list[str], list[int]]:
    """Send TEXT in chunks as the outbox does; the chunks posted and the confirmations journaled."""
    posted: list[str] = []
    confirmations: list[int] = []

    async def post(text: str, as_markup: bool, first: bool) -> None:
        posted.append(text)

    async def confirm(index: int) -> None:
        confirmations.append(index)

    token = chunk_progress.set(ChunkProgress(confirmed, confirm))
    try:
        message = OutboundMessage(chat=ChatRef("telegram", "42"), text=TEXT)
        await send_in_chunks(message, LIMIT, str, post, RetryPolicy(attempts=1), ends_send)
    finally:
        chunk_progress.reset(token)
    return posted, confirmations


async def test_every_chunk_is_confirmed_when_the_send_goes_on_after_it() -> None:
    posted, confirmations = await send(0, ends_send=False)
    assert posted == ["first part", "second part", "third part"]
    assert confirmations == [0, 1, 2]


async def test_a_send_that_ends_with_its_last_chunk_leaves_that_confirmation_to_sent() -> None:
    posted, confirmations = await send(0, ends_send=True)
    assert posted == ["first part", "second part", "third part"]
    assert confirmations == [0, 1]


async def test_a_resumed_send_posts_only_the_chunks_not_yet_confirmed() -> None:
    posted, confirmations = await send(2, ends_send=True)
    assert posted == ["third part"]
    assert confirmations == []
