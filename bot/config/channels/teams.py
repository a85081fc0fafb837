"""`channels.teams`: the Azure Bot's app id and secret, the webhook path, the sign-in endpoints (national clouds)."""

from __future__ import annotations

from pydantic import Field, SecretStr

from bot.config.channels.base import ChannelSection


class TeamsConfig(ChannelSection):
    app_id: str = ""
    app_password: SecretStr = SecretStr("")
    tenant_id: str = "botframework.com"
    webhook_path: str = Field(default="/api/messages", pattern=r"^/[\w./-]*$")
    openid_metadata: str = "https://login.botframework.com/v1/.well-known/openidconfiguration"
    token_url: str = "https://login.microsoftonline.com/{tenant_id}/oauth2/v2.0/token"
    token_scope: str = "https://api.botframework.com/.default"
    service_url: str = "https://smba.trafficmanager.net/teams/"  # for chats not heard from since the start

    def has_own_bot(self) -> bool:
        return bool(self.app_id)

    def token_endpoint(self) -> str:
        """The client-credentials endpoint with `tenant_id` filled in (single-tenant bots name their own)."""
        return self.token_url.replace("{tenant_id}", self.tenant_id)
