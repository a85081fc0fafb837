"""The sign-in side of a fake Bot Framework on 127.0.0.1: the Connector's OpenID metadata and JWKS (a locally
generated RSA key) that inbound tokens are checked against, and the client-credentials endpoint for the bot.

Wire facts, from Microsoft's "Authentication with the Bot Connector API" page and the Agents SDK's
jwt_token_validator.py and _entra_issuers.py (1.9.0):

- `GET /v1/.well-known/openidconfiguration` → `{"issuer": "https://api.botframework.com", "jwks_uri",
  "id_token_signing_alg_values_supported": ["RS256"], "token_endpoint_auth_methods_supported":
  ["private_key_jwt"]}`; `GET jwks_uri` → `{"keys": [{"kty": "RSA", "use": "sig", "kid", "n", "e",
  "endorsements": ["msteams", …]}]}` (a key signs only for the channels it endorses).
- The Connector's token on each POST to the bot: `Authorization: Bearer <JWT>`, RS256, header `kid`, claims
  `iss` (the metadata's issuer), `aud` (the bot's app id), `exp`, `nbf`, `serviceurl` (the activity's
  serviceUrl); five minutes of clock skew are allowed.
- The bot's own token: `POST /{tenant}/oauth2/v2.0/token`, form `grant_type=client_credentials`, `client_id`,
  `client_secret`, `scope=https://api.botframework.com/.default` → `{"token_type": "Bearer", "expires_in",
  "ext_expires_in", "access_token"}`; a wrong secret → 401 `{"error": "invalid_client", "error_description":
  "AADSTS7000215: Invalid client secret provided. …"}`.
"""

from __future__ import annotations

import base64
import functools
import itertools
import time
from typing import Any

from aiohttp import web

ISSUER = "https://api.botframework.com"
KID = "fake-key-1"


def _b64(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@functools.cache
def signing_key(number: int) -> Any:
    """RSA key `number` of this test run: made once, since a 2048-bit key takes a noticeable share of a second."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class FakeIssuer:
    """Signs the Connector's tokens with its own RSA key and grants the bot's app its Connector tokens."""

    def __init__(self, app_id: str, app_password: str, key_number: int = 0) -> None:
        self.app_id, self.app_password = app_id, app_password
        self._key = signing_key(key_number)
        self.granted: list[str] = []  # access tokens handed out, newest last
        self._ids = itertools.count(1)
        self.base = ""  # http://127.0.0.1:P, set once served

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/v1/.well-known/openidconfiguration", self._metadata),
            web.get("/v1/.well-known/keys", self._keys),
            web.post("/{tenant}/oauth2/v2.0/token", self._token),
        ]

    @property
    def metadata_url(self) -> str:
        return f"{self.base}/v1/.well-known/openidconfiguration"

    @property
    def token_url(self) -> str:
        return f"{self.base}/{{tenant_id}}/oauth2/v2.0/token"

    def sign(self, service_url: str, **claims: Any) -> str:
        """A Connector token for an activity from `service_url`; `claims` override (e.g. a wrong `aud`)."""
        import jwt

        now = int(time.time())
        body = {"iss": ISSUER, "aud": self.app_id, "exp": now + 3600, "nbf": now - 5, "serviceurl": service_url}
        return jwt.encode({**body, **claims}, self._key, algorithm="RS256", headers={"kid": KID})

    def granted_token(self, header: str | None) -> bool:
        """Whether an Authorization header carries a token this issuer granted the bot."""
        return bool(header) and header.removeprefix("Bearer ") in self.granted

    async def _metadata(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "issuer": ISSUER,
                "jwks_uri": f"{self.base}/v1/.well-known/keys",
                "id_token_signing_alg_values_supported": ["RS256"],
                "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            }
        )

    async def _keys(self, request: web.Request) -> web.Response:
        numbers = self._key.public_key().public_numbers()
        key = {"kty": "RSA", "use": "sig", "kid": KID, "n": _b64(numbers.n), "e": _b64(numbers.e)}
        return web.json_response({"keys": [{**key, "endorsements": ["msteams", "webchat"]}]})

    async def _token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("grant_type") != "client_credentials" or form.get("client_id") != self.app_id:
            return web.json_response({"error": "unauthorized_client", "error_description": "AADSTS700016"}, status=400)
        if form.get("client_secret") != self.app_password:
            description = "AADSTS7000215: Invalid client secret provided."
            return web.json_response({"error": "invalid_client", "error_description": description}, status=401)
        token = f"bot-token-{next(self._ids)}"
        self.granted.append(token)
        return web.json_response(
            {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token}
        )
