"""The fake server's embeddings: a hashed bag of words, so texts sharing words get close vectors, deterministically."""

from __future__ import annotations

import base64
import math
import re
import struct
import zlib
from collections.abc import Mapping

DIMENSIONS = 64


def words(text: str) -> list[str]:
    """The text's lower-case words, a plural `s` dropped, so `trails` and `trail` count as one."""
    found = re.findall(r"[a-z0-9]+", text.lower())
    return [word[:-1] if len(word) > 3 and word.endswith("s") else word for word in found]


def embed(text: str, same: Mapping[str, str] | None = None, dimensions: int = DIMENSIONS) -> list[float]:
    """A unit vector: each word adds one to the slot its CRC-32 picks (a text without words gets the first axis).

    `same` maps words to the word they mean (`hike` -> `walk`), as a real model puts synonyms close together.
    """
    vector = [0.0] * dimensions
    for word in words(text):
        word = (same or {}).get(word, word)
        vector[zlib.crc32(word.encode()) % dimensions] += 1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0:
        return [1.0] + [0.0] * (dimensions - 1)
    return [value / norm for value in vector]


def encoded(vector: list[float], encoding_format: str | None) -> list[float] | str:
    """As OpenAI sends a vector: a list of floats, or (`base64`, the openai SDK's default) little-endian float32."""
    if encoding_format == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
    return vector
