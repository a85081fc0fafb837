import logging

from bot.logs import RedactSecrets


def test_secrets_are_masked_in_log_lines(caplog) -> None:
    logger = logging.getLogger("test.redaction")
    caplog.handler.addFilter(RedactSecrets(["123456:SECRET-TOKEN", "sk-abcdef"]))
    with caplog.at_level(logging.INFO, logger="test.redaction"):
        logger.info("POST https://api.telegram.org/bot%s/getMe with key %s", "123456:SECRET-TOKEN", "sk-abcdef")
    assert caplog.records[0].getMessage() == "POST https://api.telegram.org/bot***/getMe with key ***"
    assert "SECRET" not in caplog.text
