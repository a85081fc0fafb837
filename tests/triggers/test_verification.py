"""Verification: GitHub's HMAC signature over the raw body, a bare hex digest, and bearer tokens."""

from __future__ import annotations

import hashlib
import hmac

from bot.config.schema_triggers import TriggerConfig
from bot.triggers.verification import signature, signing_headers, verified

BODY = b'{"action":"opened"}'


def github(**overrides: object) -> TriggerConfig:
    return TriggerConfig.model_validate(
        {"name": "github", "secret": "It's a Secret to Everybody", "chat": "telegram:1", **overrides}
    )


def test_signature_is_githubs_sha256_hmac_of_the_raw_body() -> None:
    # GitHub's documented example: secret "It's a Secret to Everybody", payload "Hello, World!"
    expected = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature("It's a Secret to Everybody", b"Hello, World!") == f"sha256={expected}"


def test_a_github_signature_passes_in_the_configured_header() -> None:
    trigger = github(header="X-Hub-Signature-256")
    assert verified(trigger, {"x-hub-signature-256": signature("It's a Secret to Everybody", BODY)}, BODY)


def test_a_bare_hex_digest_passes_too() -> None:
    digest = hmac.new(b"It's a Secret to Everybody", BODY, hashlib.sha256).hexdigest()
    assert verified(github(), {"x-signature": digest}, BODY)


def test_a_changed_body_or_wrong_secret_or_missing_header_fails() -> None:
    trigger = github()
    good = signature("It's a Secret to Everybody", BODY)
    assert not verified(trigger, {"x-signature": good}, BODY + b" ")
    assert not verified(trigger, {"x-signature": signature("another secret", BODY)}, BODY)
    assert not verified(trigger, {}, BODY)
    assert not verified(trigger, {"x-signature": "sha256="}, BODY)


def test_bearer_takes_the_token_with_or_without_its_prefix() -> None:
    trigger = github(verify="bearer", secret="tok-123")
    assert verified(trigger, {"authorization": "Bearer tok-123"}, BODY)
    assert not verified(trigger, {"authorization": "Bearer tok-124"}, BODY)
    assert not verified(trigger, {"authorization": ""}, BODY)
    custom = github(verify="bearer", secret="tok-123", header="X-Token")
    assert verified(custom, {"x-token": "tok-123"}, BODY)


def test_signing_headers_pass_their_own_verification() -> None:
    for trigger in (github(), github(header="X-Hub-Signature-256"), github(verify="bearer", secret="t")):
        headers = {key.lower(): value for key, value in signing_headers(trigger, BODY).items()}
        assert verified(trigger, headers, BODY)
