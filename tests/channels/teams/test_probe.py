"""`relaybot doctor` for Teams names the key at fault."""

from bot.config.channels.teams import TeamsConfig
from channels.teams.probe import check_teams
from tests.fakes.teams_server import FakeTeams


async def test_a_refused_secret_names_app_password_and_a_good_one_passes() -> None:
    async with FakeTeams() as fake:
        good = TeamsConfig.model_validate({**fake.section(), "enabled": True})
        (passed,) = await check_teams("teams", good, 5, "channels.teams")
        (failed,) = await check_teams(
            "teams", TeamsConfig.model_validate({**fake.section(), "app_password": "no"}), 5, "channels.teams"
        )
    assert passed.status == "ok"
    assert failed.status == "fail" and "channels.teams.app_password" in failed.fix and "AADSTS7000215" in failed.detail


async def test_an_empty_app_id_is_named() -> None:
    (check,) = await check_teams("teams", TeamsConfig(), 5, "channels.teams")
    assert check.status == "fail" and "channels.teams.app_id" in check.detail
