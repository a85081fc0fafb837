import logging
from pathlib import Path

from typer.testing import CliRunner

from bot.cli.main import app
from bot.logs import RedactSecrets, adopt_library_loggers, follow_lines, last_lines, setup_logging, third_party_level
from tests.fakes.openai_server import FakeLLM
from tests.support.cli_process import env_for, run_cli, write_config


def test_secrets_are_masked_in_log_lines(caplog) -> None:
    logger = logging.getLogger("test.redaction")
    caplog.handler.addFilter(RedactSecrets(["123456:SECRET-TOKEN", "sk-abcdef"]))
    with caplog.at_level(logging.INFO, logger="test.redaction"):
        logger.info("POST https://api.telegram.org/bot%s/getMe with key %s", "123456:SECRET-TOKEN", "sk-abcdef")
    assert caplog.records[0].getMessage() == "POST https://api.telegram.org/bot***/getMe with key ***"
    assert "SECRET" not in caplog.text


def test_libraries_stay_at_info_while_ours_debug_unless_trace_is_asked_for() -> None:
    assert third_party_level("debug") == logging.INFO
    assert third_party_level("info") == logging.WARNING
    assert third_party_level("error") == logging.ERROR
    assert third_party_level("trace") == logging.DEBUG
    try:
        setup_logging("debug")
        assert logging.getLogger("bot").getEffectiveLevel() == logging.DEBUG
        assert not logging.getLogger("openai").isEnabledFor(logging.DEBUG)
        assert not logging.getLogger("httpx").isEnabledFor(logging.DEBUG)
        assert not logging.getLogger("LiteLLM").isEnabledFor(logging.DEBUG)
    finally:
        setup_logging("warning")


def test_litellm_lines_reach_the_log_once(capsys) -> None:
    library = logging.getLogger("LiteLLM")
    library.addHandler(logging.StreamHandler())  # what litellm does at import
    try:
        setup_logging("info")
        adopt_library_loggers()
        library.warning("one line from litellm")
        assert capsys.readouterr().err.count("one line from litellm") == 1
    finally:
        setup_logging("warning")


def test_log_file_is_private_and_tail_and_follow_read_it(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "relaybot.log"
    try:
        setup_logging("info", file=path, stderr=False)
        for i in range(5):
            logging.getLogger("bot.test").info("event %d", i)
    finally:
        setup_logging("warning")
    assert path.stat().st_mode & 0o777 == 0o600
    assert [line.split(": ", 1)[1] for line in last_lines(path, 2)] == ["event 3\n", "event 4\n"]

    def append_on_sleep(_: float) -> None:
        with path.open("a") as file:
            file.write("appended\n")

    assert next(follow_lines(path, sleep=append_on_sleep)) == "appended\n"


def test_stderr_and_the_file_get_the_same_masked_line_and_the_file_rotates_at_its_size(tmp_path: Path, capsys) -> None:
    path = tmp_path / "logs" / "relaybot.log"
    try:
        setup_logging("info", secrets=["sk-abcdef"], file=path, file_bytes=300)
        for i in range(8):
            logging.getLogger("bot.test").info("event %d with key %s", i, "sk-abcdef")
    finally:
        setup_logging("warning")
    printed = capsys.readouterr().err.splitlines()
    assert len(printed) == 8 and printed[-1].endswith("bot.test: event 7 with key ***")
    assert last_lines(path, 1) == [printed[-1] + "\n"] and path.stat().st_size < 300
    rotated = path.with_name("relaybot.log.1")
    assert rotated.exists() and "sk-abcdef" not in rotated.read_text() + path.read_text()


async def test_debug_logs_never_print_request_bodies(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write_config(tmp_path, fake_llm)
    code, out, err = await run_cli(tmp_path, "--log-level", "debug", "chat", "-m", "my very private words")
    assert code == 0, err
    assert "turn answered" in err
    assert "my very private words" not in err
    assert err.count("turn answered") == 1


async def test_chat_logs_go_to_a_file_unless_a_level_is_given(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write_config(tmp_path, fake_llm)
    code, out, err = await run_cli(tmp_path, "chat", "-m", "hello")
    assert code == 0 and err == ""
    assert "turn answered" in (tmp_path / "state" / "logs" / "chat.log").read_text()


async def test_normal_events_are_not_warnings(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write_config(tmp_path, fake_llm)
    code, out, err = await run_cli(tmp_path, "--log-level", "warning", "chat", "-m", "hello")
    assert code == 0 and err == ""


def test_logs_command_shows_the_gateway_log(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("llm:\n  model: openai/x\n")
    runner = CliRunner()
    missing = runner.invoke(app, ["logs"], env=env_for(tmp_path))
    assert missing.exit_code == 1 and "relaybot run" in missing.output
    log = tmp_path / "state" / "logs" / "relaybot.log"
    log.parent.mkdir(parents=True)
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    shown = runner.invoke(app, ["logs", "-n", "3"], env=env_for(tmp_path))
    assert shown.exit_code == 0 and shown.output == "line 97\nline 98\nline 99\n"


def test_version_prints_once() -> None:
    from bot import __version__

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"relaybot {__version__}\n"


def test_the_mcp_sdks_http_client_says_nothing_per_request_at_info() -> None:
    try:
        setup_logging("info")
        assert not logging.getLogger("httpx2").isEnabledFor(logging.INFO)
        assert logging.getLogger("bot").isEnabledFor(logging.INFO)
    finally:
        setup_logging("warning")
