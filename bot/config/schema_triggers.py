"""`triggers:`: signed webhooks that start a turn toward a configured chat (POST /hooks/<name>)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from bot.bus import ChatRef, Trust
from bot.config.section import Section

TRIGGER_NAME = r"^[a-z0-9][a-z0-9_-]{0,39}$"
RATE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|day)\s*$")
PER = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}
FIELD = re.compile(r"\{([^{}]*)\}")
TRIGGER_CHANNEL = "trigger"
"""The channel of a trigger's own session (`trigger:<name>`), whose replies go on to the configured chat."""
DEFAULT_PROMPT = "A {event} delivery arrived on this webhook; tell the chat what happened, briefly."


def rate_window(rate: str) -> tuple[int, float]:
    """`30/minute` as (30, 60.0): how many deliveries within how many seconds."""
    match = RATE.match(rate)
    if match is None:
        raise ValueError(f"{rate!r} is not a rate; use a count per second, minute, hour or day such as 30/minute")
    return int(match.group(1)), PER[match.group(2)]


def template_fields(prompt: str) -> list[str]:
    """The fields a prompt names (`payload.pull_request.title`, `event`), `{{` and `}}` being literal braces."""
    return FIELD.findall(prompt.replace("{{", "").replace("}}", ""))


def target_chat(chat: str) -> ChatRef:
    """The chat a trigger's reply goes to: `channel[@account]:chat_id[:thread]`, or a bare address for email."""
    if ":" not in chat and "@" in chat:
        return ChatRef("email", chat)
    return ChatRef.parse(chat)


class TriggerConfig(Section):
    """One webhook: how its requests are verified, which deliveries start a turn, and where the reply goes."""

    name: str = Field(pattern=TRIGGER_NAME)
    verify: Literal["hmac-sha256", "bearer"] = "hmac-sha256"
    secret: SecretStr
    header: str | None = None  # default X-Signature (hmac-sha256) or Authorization (bearer)
    delivery_id: str = "header:X-GitHub-Delivery"  # or json:some.path
    events: list[str] = []  # X-GitHub-Event values that start a turn; empty: every event
    event_header: str = "X-GitHub-Event"
    chat: str
    agent: str | None = None  # default: the agent the target chat is bound to
    session: Literal["own", "shared"] = "own"
    prompt: str = DEFAULT_PROMPT
    payload_chars: int = Field(default=8000, ge=0)  # how much of the payload the model reads (0: none)
    trust: Trust = Trust.GUEST
    trusted: bool = False  # the owner controls the sender: trust may be admin or owner
    max_bytes: int = Field(default=1_048_576, gt=0)
    rate: str = "30/minute"

    @field_validator("secret")
    @classmethod
    def _secret_set(cls, value: SecretStr) -> SecretStr:
        if not value.get_secret_value():
            raise ValueError("is empty; set the webhook's shared secret (or the bearer token)")
        return value

    @field_validator("chat")
    @classmethod
    def _chat(cls, value: str) -> str:
        target_chat(value)
        return value

    @field_validator("rate")
    @classmethod
    def _rate(cls, value: str) -> str:
        rate_window(value)
        return value

    @field_validator("delivery_id")
    @classmethod
    def _delivery_id(cls, value: str) -> str:
        source, _, name = value.partition(":")
        if source not in ("header", "json") or not name:
            raise ValueError(f"{value!r} is not a delivery id; use header:<Name> or json:<dotted.path>")
        return value

    @field_validator("prompt")
    @classmethod
    def _prompt(cls, value: str) -> str:
        for name in template_fields(value):
            if name != "event" and name != "payload" and not re.fullmatch(r"payload(\.[\w-]+)+", name):
                raise ValueError(f"{{{name}}} is not a field; use {{payload.dotted.path}} or {{event}}")
        return value

    @model_validator(mode="after")
    def _trust_within_reach(self) -> TriggerConfig:
        if self.trust.rank > Trust.USER.rank and not self.trusted:
            raise ValueError(
                f"trust {self.trust.value} is above user; set trusted: true only for a sender the owner controls"
            )
        return self

    @property
    def signature_header(self) -> str:
        """The header carrying the signature or the token."""
        return self.header or ("X-Signature" if self.verify == "hmac-sha256" else "Authorization")

    @property
    def target(self) -> ChatRef:
        """The chat the reply goes to."""
        return target_chat(self.chat)

    @property
    def session_chat(self) -> ChatRef:
        """Where the trigger's turns run: its own session, or with `session: shared` the target chat's."""
        return self.target if self.session == "shared" else ChatRef(TRIGGER_CHANNEL, self.name)

    @property
    def needs_fields(self) -> bool:
        """Whether the prompt reads the JSON body (so a body that is not JSON is refused)."""
        return any(name.startswith("payload") for name in template_fields(self.prompt))
