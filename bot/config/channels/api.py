"""`channels.api`: the API channel's server, its tokens and the origins its web pages may be called from."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from bot.config.section import Section


class ApiTokenConfig(Section):
    token: SecretStr
    name: str = Field(default="me", pattern=r"^[A-Za-z0-9_.-]{1,40}$")
    trust: Literal["owner", "admin", "user", "guest"] = "owner"


class ApiConfig(Section):
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=18790, ge=0, le=65535)
    allow_remote: bool = False
    tokens: list[ApiTokenConfig] = []
    allowed_origins: list[str] = []
    show_reasoning: bool = False

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        for origin in value:
            if not re.fullmatch(r"https?://[^/?#\s]+/?", origin):
                raise ValueError(
                    f"{origin!r} is not an origin; write scheme://host[:port], e.g. https://chat.example.org"
                )
        return value

    @field_validator("tokens")
    @classmethod
    def _unique_names(cls, value: list[ApiTokenConfig]) -> list[ApiTokenConfig]:
        names = [token.name for token in value]
        if len(set(names)) != len(names):
            raise ValueError("each API token needs its own name")
        return value

    def model_post_init(self, context: Any) -> None:
        if not self.allow_remote and not _is_loopback(self.host):
            raise ValueError(f"host {self.host!r} is not loopback; set allow_remote: true to serve other machines")


def _is_loopback(host: str) -> bool:
    """Whether a bind address only accepts local connections."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
