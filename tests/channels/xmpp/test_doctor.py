"""`relaybot doctor` on XMPP: a login on a real Prosody, and a refused password named by its keys."""

from pathlib import Path

from tests.fakes.openai_server import FakeLLM
from tests.setup.test_doctor import doctor, line, write
from tests.support.prosody import PASSWORD, ProsodyServer


def xmpp_config(fake_llm: FakeLLM, jid: str, password: str, port: int) -> str:
    return (
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        f"channels:\n  xmpp: {{enabled: true, jid: '{jid}', password: '{password}', host: 127.0.0.1,"
        f" port: {port}, tls: 'off'}}\n"
    )


async def test_the_login_is_accepted_and_a_wrong_password_names_the_keys(tmp_path: Path, fake_llm: FakeLLM) -> None:
    server = ProsodyServer.start(upload=False)
    try:
        jid = server.account("bot")
        write(tmp_path, xmpp_config(fake_llm, jid, PASSWORD, server.port))
        _, good = await doctor(tmp_path)
        write(tmp_path, xmpp_config(fake_llm, jid, "wrong", server.port))
        code, bad = await doctor(tmp_path)
    finally:
        server.stop()
    assert line(good, "xmpp") == f"✓ xmpp: {jid} logs in"
    assert code == 1 and line(bad, "xmpp").startswith("✗ xmpp: ")
    assert line(bad, "xmpp").endswith("→ check channels.xmpp.jid and channels.xmpp.password") and "wrong" not in bad
