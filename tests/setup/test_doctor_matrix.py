"""`relaybot doctor` asks the real Synapse (/account/whoami) whether the Matrix access token is accepted."""

from pathlib import Path

from tests.setup.test_doctor import doctor, line, write
from tests.support.synapse import Synapse


async def test_a_matrix_token_is_checked_and_a_wrong_one_names_the_key(tmp_path: Path, synapse: Synapse) -> None:
    bot = synapse.register("doctor")
    matrix = f"{{enabled: true, homeserver: '{synapse.url}', user_id: '{bot.user_id}'"
    write(tmp_path / "good", f"channels:\n  matrix: {matrix}, access_token: {bot.access_token}}}\n")
    write(tmp_path / "bad", f"channels:\n  matrix: {matrix}, access_token: syt_WRONG}}\n")
    _, good = await doctor(tmp_path / "good")
    code, bad = await doctor(tmp_path / "bad")
    assert (
        line(good, "matrix access token")
        == f"✓ matrix access token: accepted ({bot.user_id} on 127.0.0.1:{synapse.port})"
    )
    assert code == 1 and line(bad, "matrix access token").startswith("✗ matrix access token: rejected by 127.0.0.1")
    assert "→ put a valid token in channels.matrix.access_token" in line(bad, "matrix access token")
    assert "WRONG" not in bad and bot.access_token not in good
