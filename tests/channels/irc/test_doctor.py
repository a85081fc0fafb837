"""`relaybot doctor` on IRC: registration on a real ngircd, and an unreachable server named by its keys."""

import socket
from pathlib import Path

from tests.fakes.openai_server import FakeLLM
from tests.setup.test_doctor import doctor, line, write
from tests.support.ngircd import NgircdServer


def irc_config(fake_llm: FakeLLM, port: int) -> str:
    return (
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        f"channels:\n  irc: {{enabled: true, server: 127.0.0.1, port: {port}, tls: false, nick: relaybot}}\n"
    )


async def test_the_server_accepts_registration(tmp_path: Path, fake_llm: FakeLLM, ngircd: NgircdServer) -> None:
    write(tmp_path, irc_config(fake_llm, ngircd.port))
    _, output = await doctor(tmp_path)
    assert line(output, "irc") == f"✓ irc: 127.0.0.1:{ngircd.port} accepts connections"


async def test_an_unreachable_server_fails_naming_the_keys(tmp_path: Path, fake_llm: FakeLLM) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: the connection is refused
        write(tmp_path, irc_config(fake_llm, port))
        code, output = await doctor(tmp_path)
    assert code == 1
    assert line(output, "irc") == (
        f"✗ irc: cannot reach 127.0.0.1:{port} (ConnectionRefusedError)"
        " → check channels.irc.server, channels.irc.port and channels.irc.tls"
    )
