"""`relaybot doctor` on the apps reached by webhook or mail server: WhatsApp's token and number, email's IMAP and SMTP
logins against a real Dovecot and aiosmtpd."""

import socket
from pathlib import Path

from tests.fakes.openai_server import FakeLLM
from tests.fakes.whatsapp_server import FakeWhatsApp
from tests.setup.test_doctor import doctor, line, write
from tests.support.mail_servers import BOT_ADDRESS, Dovecot, DovecotServer, SmtpSink


def whatsapp_config(fake_llm: FakeLLM, fake: FakeWhatsApp, token: str, app_secret: str) -> str:
    return (
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        "health: {port: 0}\n"
        f"channels:\n  whatsapp: {{enabled: true, phone_number_id: '{fake.phone_number_id}', access_token: {token},"
        f" app_secret: '{app_secret}', verify_token: v, api_base: '{fake.api_base}'}}\n"
    )


async def test_whatsapp_token_accepted_and_secrets_set(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeWhatsApp() as fake:
        write(tmp_path, whatsapp_config(fake_llm, fake, fake.token, fake.app_secret))
        _, output = await doctor(tmp_path)
    assert line(output, "whatsapp access token") == "✓ whatsapp access token: accepted (+1 555-000-1055)"
    assert line(output, "whatsapp webhook").startswith("✓ whatsapp webhook: secrets set; Meta calls /whatsapp/webhook")


async def test_whatsapp_refused_token_and_missing_secret_fail_with_fixes(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeWhatsApp() as fake:
        write(tmp_path, whatsapp_config(fake_llm, fake, "EAAwrong", ""))
        code, output = await doctor(tmp_path)
    assert code == 1
    assert line(output, "whatsapp access token").startswith("✗ whatsapp access token: rejected by 127.0.0.1")
    assert line(output, "whatsapp webhook") == (
        "✗ whatsapp webhook: channels.whatsapp.app_secret not set → copy them from the Meta app's WhatsApp settings"
    )
    assert "EAAwrong" not in output


def email_config(fake_llm: FakeLLM, imap: Dovecot, smtp: SmtpSink, imap_password: str, smtp_password: str) -> str:
    return (
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        "channels:\n  email:\n    enabled: true\n"
        f"    imap: {{host: 127.0.0.1, port: {imap.port}, user: '{imap.user}', password: '{imap_password}',"
        " tls: false}\n"
        f"    smtp: {{host: 127.0.0.1, port: {smtp.port}, user: '{BOT_ADDRESS}', password: '{smtp_password}',"
        f" from: '{BOT_ADDRESS}', tls: 'off'}}\n"
    )


async def test_email_logins_accepted_and_folder_selected(
    tmp_path: Path, fake_llm: FakeLLM, dovecot: Dovecot, smtp_sink: SmtpSink
) -> None:
    write(tmp_path, email_config(fake_llm, dovecot, smtp_sink, dovecot.password, "smtp-pw"))
    _, output = await doctor(tmp_path)
    assert line(output, "email imap") == f"✓ email imap: {dovecot.user} reads INBOX on 127.0.0.1:{dovecot.port}"
    assert line(output, "email smtp") == (
        f"✓ email smtp: 127.0.0.1:{smtp_sink.port} accepts mail from {BOT_ADDRESS} after login"
    )


async def test_email_refused_logins_name_the_password_keys(
    tmp_path: Path, fake_llm: FakeLLM, plain_dovecot_server: DovecotServer, smtp_sink: SmtpSink
) -> None:
    imap = plain_dovecot_server.mailbox()  # a refused login slows later logins to its server: not the shared one
    write(tmp_path, email_config(fake_llm, imap, smtp_sink, "wrong-imap-pw", "wrong-smtp-pw"))
    code, output = await doctor(tmp_path)
    assert code == 1
    assert line(output, "email imap").endswith(
        "refused the login of " + imap.user + " → check channels.email.imap.password"
    )
    assert line(output, "email smtp").endswith(
        f"refused the login of {BOT_ADDRESS} (535) → check channels.email.smtp.password"
    )
    assert "wrong-imap-pw" not in output and "wrong-smtp-pw" not in output


async def test_email_server_that_is_down_names_host_and_port(
    tmp_path: Path, fake_llm: FakeLLM, dovecot: Dovecot, smtp_sink: SmtpSink
) -> None:
    write(
        tmp_path,
        email_config(fake_llm, dovecot, smtp_sink, dovecot.password, "smtp-pw").replace(
            f"port: {dovecot.port}", f"port: {unused_port()}"
        ),
    )
    code, output = await doctor(tmp_path)
    assert code == 1
    assert "cannot reach 127.0.0.1:" in line(output, "email imap")
    assert line(output, "email imap").endswith(
        "→ check channels.email.imap.host, channels.email.imap.port and channels.email.imap.tls"
    )
    assert line(output, "email smtp").startswith("✓")


async def test_whatsapp_phone_number_id_unknown_names_the_key(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeWhatsApp() as fake:
        write(
            tmp_path,
            whatsapp_config(fake_llm, fake, fake.token, fake.app_secret).replace(
                f"phone_number_id: '{fake.phone_number_id}'", "phone_number_id: '999'"
            ),
        )
        code, output = await doctor(tmp_path)
    assert code == 1
    assert "does not exist" in line(output, "whatsapp access token")


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
