"""`relaybot doctor` on the apps reached by webhook or mail server: WhatsApp (and email) credentials."""

from pathlib import Path

from tests.fakes.openai_server import FakeLLM
from tests.fakes.whatsapp_server import FakeWhatsApp
from tests.setup.test_doctor import doctor, line, write


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
