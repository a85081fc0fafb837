"""Pictures out: image generation through litellm (`tools.image.model`), with the provider's price when known."""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from bot.errors import ProviderError
from bot.llm.keys import call_key
from bot.llm.prices import image_cost
from bot.llm.transports.litellm_loader import import_litellm

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GeneratedImage:
    """One picture's bytes and type, and what it cost (None when the price is unknown)."""

    data: bytes
    mime_type: str
    cost: float | None = None


class ImageMaker(Protocol):
    """Anything that draws a picture from a prompt with one model (metered by `bot.usage.metered_images`)."""

    model: str

    async def generate(self, prompt: str) -> GeneratedImage: ...


class ImageModel:
    """litellm's `aimage_generation` with one model, size and quality; base64 answers preferred, URLs fetched; the
    key from the environment only as `bot.llm.keys` allows."""

    def __init__(
        self,
        model: str,
        api_base: str | None,
        api_key: str,
        size: str,
        quality: str | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.model = model
        self._api_base = api_base
        self._api_key = call_key(model, api_key, api_base)
        self._size = size
        self._quality = quality
        self._timeout = timeout

    async def generate(self, prompt: str) -> GeneratedImage:
        """The first picture the model draws for `prompt`; ProviderError when it draws none."""
        litellm = import_litellm()
        options: dict[str, Any] = {"model": self.model, "prompt": prompt, "n": 1, "timeout": self._timeout}
        options.update(size=self._size, **({"quality": self._quality} if self._quality else {}))
        if self._api_base:
            options["api_base"] = self._api_base
        if self._api_key:
            options["api_key"] = self._api_key
        try:
            response = await litellm.aimage_generation(**options)
        except litellm.exceptions.APIError as exc:  # the base of litellm's provider errors
            raise ProviderError(f"image generation failed ({type(exc).__name__})") from exc
        pictures = list(getattr(response, "data", None) or [])
        if not pictures:
            raise ProviderError("the image model answered without a picture")
        data = await _bytes_of(pictures[0], self._timeout)
        return GeneratedImage(data, _mime_of(data), self._cost(response))

    def _cost(self, response: Any) -> float | None:
        """litellm's price for the call when it has one, else the table's per-picture price for the size and
        quality."""
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        if cost:  # 0.0 is what litellm says for a usage-priced model whose usage it was not told
            return float(cost)
        return image_cost(self.model, self._size, self._quality)


async def _bytes_of(picture: Any, timeout: float) -> bytes:
    """A picture's bytes from its `b64_json`, else downloaded from its `url`."""
    encoded = getattr(picture, "b64_json", None)
    if encoded:
        return base64.b64decode(encoded)
    url = getattr(picture, "url", None)
    if not url:
        raise ProviderError("the image model answered without image data")
    import aiohttp

    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
        session.get(url) as reply,
    ):
        if reply.status != 200:
            raise ProviderError(f"downloading the picture failed (HTTP {reply.status})")
        return await reply.read()


def _mime_of(data: bytes) -> str:
    """The picture's type from its first bytes (PNG, JPEG, WebP, GIF); PNG when unsure."""
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return "image/png"


EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}
