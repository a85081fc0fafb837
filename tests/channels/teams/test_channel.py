"""The Teams channel alone against the fake Connector: pasted images fetched with the bot's token, only from the
Connector's own host."""

from pathlib import Path

from tests.fakes.teams_server import FakeTeams
from tests.support.platform_teams import Teams

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


async def test_a_pasted_image_is_fetched_with_the_bots_token(tmp_path: Path) -> None:
    async with FakeTeams() as fake, Teams(fake).adapter(tmp_path) as bot:
        fake.personal_image(PNG, "29:ann")
        message = await bot.next()
    (image,) = message.attachments
    assert image.kind == "image" and Path(image.path).read_bytes() == PNG


async def test_the_bots_token_never_goes_to_another_host(tmp_path: Path) -> None:
    async with FakeTeams() as fake, Teams(fake).adapter(tmp_path) as bot:
        fake.personal_image(PNG, "29:ann", host=f"http://localhost:{fake.port}")
        message = await bot.next()
    assert message.attachments == ()
