"""Writing, checking and unpacking a backup archive (a gzipped tar with `manifest.json` first)."""

from __future__ import annotations

import io
import tarfile
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from bot.backup.manifest import MANIFEST, Manifest, sha256_of
from bot.errors import BackupError


def write_archive(staging: Path, target: Path, redis_prefix: str | None) -> Manifest:
    """Pack every file under `staging` into `target` (mode 0600) behind a manifest of their checksums."""
    from bot import __version__

    files = sorted(path for path in staging.rglob("*") if path.is_file())
    names = {path.relative_to(staging).as_posix(): path for path in files}
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    manifest = Manifest(__version__, stamp, {name: _file_digest(path) for name, path in names.items()}, redis_prefix)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with tarfile.open(partial, "w:gz") as archive:
        data = manifest.to_json()
        info = tarfile.TarInfo(MANIFEST)
        info.size, info.mode = len(data), 0o600
        archive.addfile(info, io.BytesIO(data))
        for name, path in names.items():
            archive.add(path, arcname=name, recursive=False)
    partial.chmod(0o600)
    partial.replace(target)
    return manifest


def safe_name(name: str, archive: Path) -> PurePosixPath:
    """A member name that stays inside the folder it is unpacked into; BackupError for one that climbs out."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or "\\" in name:
        raise BackupError(f"refusing member {name!r}: its path leaves the restore folder", str(archive))
    return path


def verify_archive(archive: Path) -> Manifest:
    """Check every member against the manifest (present, safe, a plain file, same checksum, nothing extra)."""
    if not archive.is_file():
        raise BackupError("no such file", str(archive))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            manifest = _manifest_of(tar, archive)
            seen: set[str] = set()
            for member in tar:
                if member.name == MANIFEST:
                    continue
                safe_name(member.name, archive)
                if not member.isfile():
                    raise BackupError(f"member {member.name!r} is not a plain file", str(archive))
                expected = manifest.files.get(member.name)
                if expected is None:
                    raise BackupError(f"member {member.name!r} is not in the manifest", str(archive))
                if _digest(tar, member) != expected:
                    raise BackupError(f"{member.name} does not match its checksum", str(archive))
                seen.add(member.name)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BackupError(f"not a readable backup archive ({exc})", str(archive)) from exc
    missing = sorted(set(manifest.files) - seen)
    if missing:
        raise BackupError(f"{len(missing)} file(s) of the manifest are missing, first {missing[0]}", str(archive))
    return manifest


def unpack_archive(archive: Path, into: Path) -> Manifest:
    """Verify `archive`, then write its files under `into` (0700 folders, 0600 files); return its manifest."""
    manifest = verify_archive(archive)
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if member.name == MANIFEST:
                continue
            target = into.joinpath(*safe_name(member.name, archive).parts)
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            source = tar.extractfile(member)
            assert source is not None  # verify_archive admitted plain files only
            with source, target.open("xb") as out:
                out.write(source.read())
            target.chmod(0o600)
    return manifest


def _manifest_of(tar: tarfile.TarFile, archive: Path) -> Manifest:
    try:
        member = tar.getmember(MANIFEST)
    except KeyError:
        raise BackupError("no manifest.json: not a relaybot backup", str(archive)) from None
    source = tar.extractfile(member)
    if source is None:
        raise BackupError("manifest.json is not a file", str(archive))
    try:
        return Manifest.from_json(source.read())
    except (ValueError, KeyError) as exc:
        raise BackupError(f"manifest.json is damaged ({exc})", str(archive)) from None


def _digest(tar: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    source = tar.extractfile(member)
    assert source is not None  # the caller admitted plain files only
    with source:
        return sha256_of(source)


def _file_digest(path: Path) -> str:
    with path.open("rb") as file:
        return sha256_of(file)
