"""The backup's manifest: relaybot's version, when it was made, and a checksum per file."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import IO, Any

MANIFEST = "manifest.json"
FORMAT = 1


def sha256_of(file: IO[bytes]) -> str:
    """The hex SHA-256 of what is left to read in `file`, read in blocks."""
    digest = hashlib.sha256()
    for block in iter(lambda: file.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Manifest:
    """What an archive holds: `files` maps each member's name to its SHA-256; `redis_prefix` when keys are in it."""

    version: str
    created_at: str
    files: dict[str, str] = field(default_factory=dict)
    redis_prefix: str | None = None
    format: int = FORMAT

    def to_json(self) -> bytes:
        """The manifest as the archive stores it."""
        return json.dumps(asdict(self), indent=2, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> Manifest:
        """Parse a stored manifest; ValueError when it is not one."""
        raw: Any = json.loads(data)
        if not isinstance(raw, dict) or not isinstance(raw.get("files"), dict):
            raise ValueError("not a relaybot backup manifest")
        return cls(
            version=str(raw["version"]),
            created_at=str(raw["created_at"]),
            files={str(name): str(digest) for name, digest in raw["files"].items()},
            redis_prefix=raw.get("redis_prefix"),
            format=int(raw.get("format", FORMAT)),
        )
